// The systemd backend against a real private dbus-daemon and a stand-in for systemd's manager: the exact
// methods, signatures and properties sent ("Tests that use real components", systemd path).
package rsmap.device.systemd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.freedesktop.dbus.types.UInt32;
import org.freedesktop.dbus.types.Variant;
import org.junit.jupiter.api.Test;
import rsmap.device.DeviceBackend.Availability;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.DeviceRule;
import rsmap.device.FakeDevices;
import rsmap.map.DeviceList.Mode;

class SystemdBackendIT extends StandInBus {
    @Test
    void availability_standInAnswers_available() {
        Availability a = backend.availability();
        assertThat(a.available()).as(a.reason()).isTrue();
    }

    @Test
    void availability_noBus_unavailableWithReason() {
        try (SystemdBackend nowhere = new SystemdBackend("unix:path=/nonexistent/rsmap-bus", false,
                SystemdBackend.NO_EXISTING_SCOPE)) {
            Availability a = nowhere.availability();
            assertThat(a.available()).isFalse();
            assertThat(a.reason()).contains("unix:path=/nonexistent/rsmap-bus").contains("no socket");
        }
    }

    @Test
    void apply_noExecdScope_startsTransientScopeWithClosedPolicy() throws Exception {
        backend.apply("42.1", grantedPolicy(), 1234, 5678);

        assertThat(systemd.calls()).hasSize(1);
        SystemdStandIn.Call call = systemd.calls().get(0);
        assertThat(call.method()).isEqualTo("StartTransientUnit");
        assertThat(call.unit()).isEqualTo("rsmap-42.1.scope");
        assertThat(call.mode()).isEqualTo("fail");
        Map<String, Variant<?>> p = call.properties();
        assertThat(p).containsOnlyKeys("PIDs", "Delegate", "DevicePolicy", "DeviceAllow");
        // delegated, or systemd refuses to attach a later task's processes (AttachProcessesToUnit)
        assertThat(p.get("Delegate").getSig()).isEqualTo("b");
        assertThat(p.get("Delegate").getValue()).isEqualTo(true);
        assertThat(p.get("PIDs").getSig()).isEqualTo("au");
        assertThat(new ArrayList<Object>((List<?>) p.get("PIDs").getValue())).containsExactly(new UInt32(1234), new UInt32(5678));
        assertThat(p.get("DevicePolicy").getSig()).isEqualTo("s");
        assertThat(p.get("DevicePolicy").getValue()).isEqualTo("closed");
        // Grid Engine's RSMAP manual: the listed devices (widest mode) plus the five basics, read and write
        assertThat(deviceAllow(p.get("DeviceAllow"))).containsExactly("/dev/null rw", "/dev/ptmx r",
                "/dev/zero rw", "/dev/full rw", "/dev/random rw", "/dev/urandom rw");
        assertThat(backend.unitOf("42.1")).contains("rsmap-42.1.scope");
    }

    @Test
    void apply_returnsOnlyOnceSystemdNamesTheScopeAsTheProcessesUnit() throws Exception {
        // StartTransientUnit answers when the start job is queued; the job's process may not be in the scope
        // yet. Answering then would let the starter exec the job under no policy.
        systemd.lag(5);
        backend.apply("43.1", grantedPolicy(), 1234);
        // once before, whether the process is in execd's scope of the job; then until the new scope is named
        assertThat(systemd.unitByPidCalls()).as("asked until the scope was named").isEqualTo(1 + 6);
        assertThat(SystemdBackend.unitPath("rsmap-43.1.scope"))
                .isEqualTo("/org/freedesktop/systemd1/unit/rsmap_2d43_2e1_2escope");
    }

    @Test
    void apply_eachMode_rightsRWAndRw() throws Exception {
        DevicePolicy policy = new DevicePolicy(true, List.of(
                new DeviceRule("/dev/nvidia0", 'c', 195, 0, Mode.R),
                new DeviceRule("/dev/nvidia1", 'c', 195, 1, Mode.W),
                new DeviceRule("/dev/nvidia2", 'c', 195, 2, Mode.RW)), List.of());
        backend.apply("7", policy, 99);
        assertThat(deviceAllow(systemd.calls().get(0).properties().get("DeviceAllow")))
                .containsExactly("/dev/nvidia0 r", "/dev/nvidia1 w", "/dev/nvidia2 rw");
    }

    @Test
    void apply_execdScope_setsPropertiesOnThatScope() throws Exception {
        backend.apply("ocs-17.3", grantedPolicy(), 1234);

        assertThat(systemd.calls()).hasSize(2);
        // First whatever the scope allowed already is reset (execd applies a user-set SGE_DEBUG_DEVICES_ALLOW).
        SystemdStandIn.Call reset = systemd.calls().get(0);
        assertThat(reset.method()).isEqualTo("SetUnitProperties");
        assertThat(reset.unit()).isEqualTo("ocs6445.17.3.scope");
        assertThat(reset.properties()).containsOnlyKeys("DeviceAllow");
        assertThat(deviceAllow(reset.properties().get("DeviceAllow"))).isEmpty();
        SystemdStandIn.Call call = systemd.calls().get(1);
        assertThat(call.method()).isEqualTo("SetUnitProperties");
        assertThat(call.unit()).isEqualTo("ocs6445.17.3.scope");
        assertThat(call.mode()).isEqualTo("runtime=true");
        Map<String, Variant<?>> p = call.properties();
        assertThat(p).containsOnlyKeys("DevicePolicy", "DeviceAllow"); // execd placed the PIDs already
        assertThat(p.get("DevicePolicy").getValue()).isEqualTo("closed");
        assertThat(deviceAllow(p.get("DeviceAllow"))).containsExactly("/dev/null rw", "/dev/ptmx r",
                "/dev/zero rw", "/dev/full rw", "/dev/random rw", "/dev/urandom rw");
    }

    @Test
    void remove_transientScope_stopsUnit() throws Exception {
        backend.apply("42", grantedPolicy(), 1234);
        systemd.clear();
        backend.remove("42");

        assertThat(systemd.calls()).containsExactly(new SystemdStandIn.Call("StopUnit", "rsmap-42.scope", "fail", Map.of()));
        assertThat(backend.unitOf("42")).isEmpty();
        backend.remove("42"); // idempotent: nothing more is sent
        assertThat(systemd.calls()).hasSize(1);
    }

    @Test
    void remove_execdScope_resetsDeviceAllowAndReopensPolicy() throws Exception {
        backend.apply("ocs-17.3", grantedPolicy(), 1234);
        systemd.clear();
        backend.remove("ocs-17.3");

        assertThat(systemd.calls()).hasSize(1);
        SystemdStandIn.Call call = systemd.calls().get(0);
        assertThat(call.method()).isEqualTo("SetUnitProperties");
        assertThat(call.unit()).isEqualTo("ocs6445.17.3.scope");
        // SetUnitProperties appends DeviceAllow entries; only an empty list resets them
        assertThat(call.properties()).containsOnlyKeys("DeviceAllow", "DevicePolicy");
        assertThat(deviceAllow(call.properties().get("DeviceAllow"))).isEmpty();
        assertThat(call.properties().get("DevicePolicy").getValue()).isEqualTo("auto");
    }

    /**
     * Job end never widens: execd's scope lives on while a process the job left (setsid, double fork) runs
     * in it, and resetting it to DevicePolicy=auto would open every device to that process. So the backend
     * lists the scope's processes (GetUnitProcesses, over the wire as a(sus)) for rsmapd to keep it closed.
     */
    @Test
    void processes_execdScope_listsWhatRunsThere_noneOnceItIsCollected() throws Exception {
        backend.apply("ocs-17.3", grantedPolicy(), 1234);
        systemd.runIn("ocs6445.17.3.scope", 4711, 4712);
        systemd.clear();
        assertThat(backend.processes("ocs-17.3").orElseThrow()).containsExactlyInAnyOrder(4711L, 4712L);
        assertThat(sent()).containsExactly("GetUnitProcesses ocs6445.17.3.scope");
        systemd.exited(4711);
        assertThat(backend.processes("ocs-17.3").orElseThrow()).containsExactly(4712L);
        systemd.exited(4712); // the last one: systemd collects the scope, and answers NoSuchUnit
        assertThat(backend.processes("ocs-17.3").orElseThrow()).isEmpty();
    }

    @Test
    void processes_transientScope_cannotList_itsStopEndsThem() throws Exception {
        backend.apply("42", grantedPolicy(), 1234);
        systemd.clear();
        assertThat(backend.processes("42")).isEmpty();
        assertThat(systemd.calls()).as("nothing asked").isEmpty();
    }

    @Test
    void processes_noClosedPolicy_none_withoutAsking() throws Exception {
        assertThat(backend.processes("ocs-17.3").orElseThrow()).isEmpty();
        backend.apply("ocs-17.3", DevicePolicy.OPEN);
        assertThat(backend.processes("ocs-17.3").orElseThrow()).isEmpty();
        assertThat(systemd.calls()).isEmpty();
    }

    @Test
    void processes_dbusError_isAnError_notNone() throws Exception {
        backend.apply("ocs-17.3", grantedPolicy(), 1234);
        systemd.failWith("systemd is busy");
        assertThatThrownBy(() -> backend.processes("ocs-17.3")).isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("GetUnitProcesses of unit ocs6445.17.3.scope failed");
    }

    @Test
    void pids_ofEveryShapeDbusJavaGives_orAnError() throws Exception {
        Object[] entry = {"/system.slice/x.scope", new UInt32(4711), "sleep 9"};
        assertThat(SystemdBackend.pids("x.scope", List.of(entry, new UnitProcess("/", new UInt32(7), "sh"))))
                .containsExactly(4711L, 7L);
        assertThat(SystemdBackend.pids("x.scope", new Object[] {entry})).containsExactly(4711L);
        assertThat(SystemdBackend.pids("x.scope", List.of())).isEmpty();
        for (Object bad : new Object[] {null, "4711", List.of("4711"),
            List.<Object>of(new Object[] {"/", "4711", "sh"}), List.<Object>of(new Object[] {"/", new UInt32(1)})}) {
            assertThatThrownBy(() -> SystemdBackend.pids("x.scope", bad)).as("%s", bad)
                    .isInstanceOf(DevicePolicyException.class).hasMessageContaining("GetUnitProcesses of unit x.scope");
        }
    }

    /**
     * Open Cluster Scheduler with enable_systemd runs the job (and so its starter) in a scope of its own:
     * the policy goes on that scope, and the job is not moved out of it (execd signals and accounts the job
     * through it). The job's array task and PE master scopes count; another job's scope never does.
     */
    @Test
    void apply_processInExecdsScopeOfThisJob_setsThePolicyThere_movesNothing() throws Exception {
        String[][] cases = {{"91", "ocs6444.91.scope"}, {"91.3", "ocs6444.91.3.scope"},
            {"92", "ocs8012.92.master.scope"}, {"92.7", "ocs8012.92.7.master.scope"}};
        long pid = 4700;
        for (String[] c : cases) {
            systemd.reset();
            systemd.runIn(c[1], ++pid);
            backend.apply(c[0], grantedPolicy(), pid);
            assertThat(sent()).as(c[0]).containsExactly("SetUnitProperties " + c[1], "SetUnitProperties " + c[1]);
            assertThat(systemd.calls().get(1).properties().get("DevicePolicy").getValue()).isEqualTo("closed");
            assertThat(backend.unitOf(c[0])).contains(c[1]);
            systemd.clear();
            backend.remove(c[0]);
            assertThat(sent()).containsExactly("SetUnitProperties " + c[1]); // reset, never stopped: execd's
        }
    }

    @Test
    void apply_processInAnotherJobsOrAnyOtherUnit_getsAScopeOfItsOwn() throws Exception {
        for (String unit : new String[] {"ocs6444.910.scope", "ocs6444.9.scope", "ocs6444.91.3.scope",
            "xocs6444.91.scope", "ocs6444.91.service", "ocs.91.scope", "session-4.scope", "sge_execd.service"}) {
            systemd.reset();
            systemd.runIn(unit, 4711);
            backend.apply("91", grantedPolicy(), 4711);
            assertThat(sent()).as(unit).containsExactly("StartTransientUnit rsmap-91.scope");
            backend.remove("91");
        }
    }

    @Test
    void unitNames_roundTripThroughObjectPaths_seeded() {
        java.util.Random random = new java.util.Random(20261204L);
        String alphabet = "abcXYZ0189._-:@\\";
        for (int i = 0; i < 500; i++) {
            StringBuilder unit = new StringBuilder();
            for (int n = 1 + random.nextInt(30); n > 0; n--) {
                unit.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String path = SystemdBackend.unitPath(unit.toString());
            assertThat(path.substring("/org/freedesktop/systemd1/unit/".length())).matches("[A-Za-z0-9_]+");
            assertThat(SystemdBackend.unitName(path)).as(path).contains(unit.toString());
        }
        assertThat(SystemdBackend.unitName("/org/freedesktop/systemd1/job/7")).isEmpty();
        assertThat(SystemdBackend.unitName("/org/freedesktop/systemd1/unit/a_zz")).isEmpty();
        assertThat(SystemdBackend.isExecdScope("ocs6444.9.1.scope", "9.1")).isTrue();
        assertThat(SystemdBackend.isExecdScope("ocs6444.9x1.scope", "9.1")).as("a dot is a dot").isFalse();
    }

    @Test
    void apply_openPolicy_sendsNothing() throws Exception {
        backend.apply("42", DevicePolicy.OPEN, 1234);
        backend.remove("42");
        assertThat(systemd.calls()).isEmpty();
    }

    @Test
    void apply_dbusError_devicePolicyExceptionNamesUnitAndError() throws Exception {
        systemd.failWith("Unit rsmap-42.scope already exists.");
        assertThatThrownBy(() -> backend.apply("42", grantedPolicy(), 1234))
                .isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("rsmap-42.scope")
                .hasMessageContaining("SystemdStandIn.UnitExists")
                .hasMessageContaining("Unit rsmap-42.scope already exists.");
        assertThat(backend.unitOf("42")).isEmpty();
    }

    @Test
    void remove_unitAlreadyGone_isDone() throws Exception {
        // systemd drops an empty scope when the job's processes end; StopUnit then answers NoSuchUnit.
        backend.apply("42", grantedPolicy(), 1234);
        systemd.unitGone(true);
        backend.remove("42");
        assertThat(backend.unitOf("42")).isEmpty();
        assertThat(systemd.calls()).last().extracting(SystemdStandIn.Call::method).isEqualTo("StopUnit");
    }

    @Test
    void apply_noSuchUnitOnApply_isAnError() {
        systemd.unitGone(true);
        assertThatThrownBy(() -> backend.apply("42", grantedPolicy(), 1234)).isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("org.freedesktop.systemd1.NoSuchUnit");
    }

    @Test
    void remove_dbusError_devicePolicyExceptionAndStillRemembered() throws Exception {
        backend.apply("42", grantedPolicy(), 1234);
        systemd.failWith("stop refused");
        assertThatThrownBy(() -> backend.remove("42"))
                .isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("StopUnit of unit rsmap-42.scope failed")
                .hasMessageContaining("stop refused");
        assertThat(backend.unitOf("42")).contains("rsmap-42.scope"); // a retry can still remove it
    }

    @Test
    void apply_noPids_refusedWithoutCall() {
        assertThatThrownBy(() -> backend.apply("42", grantedPolicy()))
                .isInstanceOf(DevicePolicyException.class).hasMessageContaining("without processes");
        assertThat(systemd.calls()).isEmpty();
    }

    @Test
    void apply_jobNameNoUnitName_refused() {
        assertThatThrownBy(() -> backend.apply("a/b", grantedPolicy(), 1))
                .isInstanceOf(DevicePolicyException.class).hasMessageContaining("a/b");
        assertThat(systemd.calls()).isEmpty();
    }

    // a second JOB_ENTER of the same job (the Slurm plugin sends one per task) joins its scope.

    static SystemdStandIn.Call attach(String unit, long... pids) {
        List<UInt32> list = new ArrayList<>();
        for (long p : pids) {
            list.add(new UInt32(p));
        }
        return new SystemdStandIn.Call("AttachProcessesToUnit", unit, "", Map.of("PIDs", new Variant<>(list, "au")));
    }

    @Test
    void apply_secondTaskOfTheJob_joinsItsScope() throws Exception {
        backend.apply("42", grantedPolicy(), 1234);
        backend.apply("42", grantedPolicy(), 5678, 5679);

        assertThat(sent()).containsExactly("StartTransientUnit rsmap-42.scope", "AttachProcessesToUnit rsmap-42.scope");
        assertThat(systemd.calls().get(1)).isEqualTo(attach("rsmap-42.scope", 5678, 5679));
        assertThat(backend.unitOf("42")).contains("rsmap-42.scope");
        backend.remove("42"); // one scope, stopped once
        assertThat(sent()).endsWith("StopUnit rsmap-42.scope").filteredOn(c -> c.startsWith("StopUnit")).hasSize(1);
        assertThat(systemd.hasUnit("rsmap-42.scope")).isFalse();
    }

    @Test
    void apply_scopeExistsUnknownToThisBackend_setsThePolicyThenJoins() throws Exception {
        // the scope was started before rsmapd restarted (or by another task of the job a moment ago)
        backend.apply("42", grantedPolicy(), 1234);
        systemd.clear();
        try (SystemdBackend restarted = new SystemdBackend(bus.address(), false, SystemdBackend.NO_EXISTING_SCOPE)) {
            restarted.apply("42", grantedPolicy(), 5678);

            assertThat(sent()).containsExactly("StartTransientUnit rsmap-42.scope", "SetUnitProperties rsmap-42.scope",
                    "AttachProcessesToUnit rsmap-42.scope");
            // what the scope allows is unknown: reset and set in one call, before the new process joins
            SystemdStandIn.Call set = systemd.calls().get(1);
            assertThat(set.mode()).isEqualTo("runtime=true");
            assertThat(set.order()).containsExactly("DeviceAllow", "DevicePolicy", "DeviceAllow");
            assertThat(set.properties().get("DevicePolicy").getValue()).isEqualTo("closed");
            assertThat(deviceAllow(set.properties().get("DeviceAllow"))).containsExactly("/dev/null rw", "/dev/ptmx r",
                    "/dev/zero rw", "/dev/full rw", "/dev/random rw", "/dev/urandom rw");
            assertThat(systemd.calls().get(2)).isEqualTo(attach("rsmap-42.scope", 5678));
            assertThat(restarted.unitOf("42")).contains("rsmap-42.scope");

            systemd.clear();
            restarted.apply("42", grantedPolicy(), 9999); // now known: a plain join
            assertThat(sent()).containsExactly("AttachProcessesToUnit rsmap-42.scope");
        }
    }

    @Test
    void apply_secondTaskWithAnotherPolicy_setsItInOneCallThenJoins() throws Exception {
        backend.apply("42", grantedPolicy(), 1234);
        systemd.clear();
        DevicePolicy narrower = new DevicePolicy(true, List.of(new DeviceRule("/dev/null", 'c', 1, 3, Mode.RW)), List.of());
        backend.apply("42", narrower, 5678);

        assertThat(sent()).containsExactly("SetUnitProperties rsmap-42.scope", "AttachProcessesToUnit rsmap-42.scope");
        SystemdStandIn.Call set = systemd.calls().get(0);
        assertThat(set.order()).containsExactly("DeviceAllow", "DevicePolicy", "DeviceAllow");
        assertThat(deviceAllow(set.properties().get("DeviceAllow"))).containsExactly("/dev/null rw");
    }

    @Test
    void apply_scopeCollectedSinceTheFirstTask_startsItAgain() throws Exception {
        backend.apply("42", grantedPolicy(), 1234);
        systemd.collect("rsmap-42.scope"); // its last process ended
        backend.apply("42", grantedPolicy(), 5678);

        assertThat(sent()).containsExactly("StartTransientUnit rsmap-42.scope", "AttachProcessesToUnit rsmap-42.scope",
                "StartTransientUnit rsmap-42.scope");
        assertThat(systemd.hasUnit("rsmap-42.scope")).isTrue();
        assertThat(backend.unitOf("42")).contains("rsmap-42.scope");
    }

    @Test
    void apply_existingScopeNotDelegated_isAnErrorWithSystemdsReason() throws Exception {
        // a scope of that name started without Delegate (by an older rsmapd): systemd refuses to attach
        systemd.StartTransientUnit("rsmap-42.scope", "fail", List.of(), List.of());
        assertThatThrownBy(() -> backend.apply("42", grantedPolicy(), 5678)).isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("AttachProcessesToUnit of unit rsmap-42.scope failed")
                .hasMessageContaining("non-delegated");
        assertThat(backend.unitOf("42")).isEmpty();
    }

    @Test
    void apply_secondTaskInExecdScope_setsThePropertiesAgain() throws Exception {
        backend.apply("ocs-17.3", grantedPolicy(), 1234);
        backend.apply("ocs-17.3", grantedPolicy(), 5678);
        assertThat(sent()).containsExactly("SetUnitProperties ocs6445.17.3.scope", "SetUnitProperties ocs6445.17.3.scope",
                "SetUnitProperties ocs6445.17.3.scope", "SetUnitProperties ocs6445.17.3.scope");
    }

    @Test
    void apply_closedPolicyOfAJobHoldingNothing_allowsOnlyTheBasics() throws Exception {
        // the starter enters a job granted nothing here under the closed policy
        backend.apply("43", FakeDevices.basicsOnly(), 1234);

        SystemdStandIn.Call call = systemd.calls().get(0);
        assertThat(call.method()).isEqualTo("StartTransientUnit");
        assertThat(call.properties().get("DevicePolicy").getValue()).isEqualTo("closed");
        assertThat(deviceAllow(call.properties().get("DeviceAllow"))).containsExactly("/dev/null rw", "/dev/zero rw",
                "/dev/full rw", "/dev/random rw", "/dev/urandom rw");
    }

    @Test
    void apply_closedPolicyWithNoRules_stillClosed() throws Exception {
        // every basic missing on the host: closed with an empty list, never open
        backend.apply("44", new DevicePolicy(true, List.of(), List.of("/dev/null")), 1234);
        SystemdStandIn.Call call = systemd.calls().get(0);
        assertThat(call.properties().get("DevicePolicy").getValue()).isEqualTo("closed");
        assertThat(deviceAllow(call.properties().get("DeviceAllow"))).isEmpty();
    }
}
