/**
 * Device policy backends: turn the instances a job was granted into a closed device policy and
 * enforce it (systemd over D-Bus, cgroup v1 devices, dry-run). Filled in by issue 4.
 */
package rsmap.device;
