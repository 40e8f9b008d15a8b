/* slurm-slots: a job's slots on one node, from the variables of Slurm's prolog environment. */
#ifndef RSMAP_SLURM_SLOTS_H
#define RSMAP_SLURM_SLOTS_H

/* The job's CPUs on `node`: its entry of `cpus` (SLURM_JOB_CPUS_PER_NODE, "4(x2),2"), found by the
 * node's index in `list` (SLURM_JOB_NODELIST, "n[01-03,7],gpu5"; one bracket per name); the common value
 * when every node has the same; 1 where the variables do not say (NULL, empty or unreadable). */
int rsmap_slurm_slots(const char *cpus, const char *list, const char *node);

#endif
