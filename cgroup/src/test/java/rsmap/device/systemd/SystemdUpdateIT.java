// dynamic reallocation (dynamic reallocation): updating the device policy of a running job through the systemd backend,
// against a real private dbus-daemon and the stand-in for systemd's manager: the one SetUnitProperties call.
package rsmap.device.systemd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.DeviceRule;
import rsmap.map.DeviceList.Mode;

class SystemdUpdateIT extends StandInBus {
    static final DevicePolicy NULL_ONLY = new DevicePolicy(true, List.of(new DeviceRule("/dev/null", 'c', 1, 3, Mode.RW)),
            List.of());

    /** The one SetUnitProperties an update sends: runtime only, the list reset, then the policy. */
    static List<String> updateCall(SystemdStandIn.Call call, String unit, String devicePolicy) {
        assertThat(call.method()).isEqualTo("SetUnitProperties");
        assertThat(call.unit()).isEqualTo(unit);
        assertThat(call.mode()).isEqualTo("runtime=true");
        assertThat(call.properties().get("DevicePolicy").getSig()).isEqualTo("s");
        assertThat(call.properties().get("DevicePolicy").getValue()).isEqualTo(devicePolicy);
        return deviceAllow(call.properties().get("DeviceAllow"));
    }

    @Test
    void update_transientScope_narrowsThenWidensInOneCallEach() throws Exception {
        backend.apply("42", grantedPolicy(), 1234);
        systemd.clear();
        backend.update("42", NULL_ONLY);
        assertThat(sent()).containsExactly("SetUnitProperties rsmap-42.scope");
        SystemdStandIn.Call narrow = systemd.calls().get(0);
        // one call, so systemd never realises the list half-reset: the empty DeviceAllow resets it
        assertThat(narrow.order()).containsExactly("DeviceAllow", "DevicePolicy", "DeviceAllow");
        assertThat(updateCall(narrow, "rsmap-42.scope", "closed")).containsExactly("/dev/null rw");

        systemd.clear();
        backend.update("42", grantedPolicy());
        assertThat(sent()).containsExactly("SetUnitProperties rsmap-42.scope");
        assertThat(updateCall(systemd.calls().get(0), "rsmap-42.scope", "closed")).containsExactly("/dev/null rw",
                "/dev/ptmx r", "/dev/zero rw", "/dev/full rw", "/dev/random rw", "/dev/urandom rw");
        assertThat(backend.unitOf("42")).contains("rsmap-42.scope");
        assertThat(systemd.hasUnit("rsmap-42.scope")).as("the scope and its processes stay").isTrue();
    }

    @Test
    void update_thenAnotherTask_joinsWithoutSettingThePolicyAgain() throws Exception {
        // the backend remembers the updated policy as the one on the scope
        backend.apply("42", grantedPolicy(), 1234);
        backend.update("42", NULL_ONLY);
        systemd.clear();
        backend.apply("42", NULL_ONLY, 5678);
        assertThat(sent()).containsExactly("AttachProcessesToUnit rsmap-42.scope");
    }

    @Test
    void update_execdScope_setsThePolicyOnThatScope() throws Exception {
        backend.apply("ocs-17.3", grantedPolicy(), 1234);
        systemd.clear();
        backend.update("ocs-17.3", NULL_ONLY);
        assertThat(sent()).containsExactly("SetUnitProperties ocs6445.17.3.scope");
        assertThat(systemd.calls().get(0).order()).containsExactly("DeviceAllow", "DevicePolicy", "DeviceAllow");
        assertThat(updateCall(systemd.calls().get(0), "ocs6445.17.3.scope", "closed")).containsExactly("/dev/null rw");
    }

    @Test
    void update_toOpenAndBack_sameScopeAutoThenClosed() throws Exception {
        backend.apply("42", grantedPolicy(), 1234);
        systemd.clear();
        backend.update("42", DevicePolicy.OPEN);
        SystemdStandIn.Call open = systemd.calls().get(0);
        assertThat(open.order()).containsExactly("DeviceAllow", "DevicePolicy");
        assertThat(updateCall(open, "rsmap-42.scope", "auto")).isEmpty(); // auto with no entries: no restriction
        assertThat(backend.unitOf("42")).contains("rsmap-42.scope");

        backend.update("42", NULL_ONLY);
        assertThat(updateCall(systemd.calls().get(1), "rsmap-42.scope", "closed")).containsExactly("/dev/null rw");
        backend.remove("42");
        assertThat(sent()).containsExactly("SetUnitProperties rsmap-42.scope", "SetUnitProperties rsmap-42.scope",
                "StopUnit rsmap-42.scope");
    }

    @Test
    void update_noPolicyApplied_isAnError_andSendsNothing() throws Exception {
        assertThatThrownBy(() -> backend.update("42", grantedPolicy())).isInstanceOf(DevicePolicyException.class)
                .hasMessage("job 42 has no device policy applied: an update replaces a policy, it never creates one");
        backend.apply("42", grantedPolicy(), 1234);
        backend.remove("42");
        systemd.clear();
        assertThatThrownBy(() -> backend.update("42", DevicePolicy.OPEN)).as("after remove")
                .isInstanceOf(DevicePolicyException.class).hasMessageContaining("no device policy applied");
        assertThat(systemd.calls()).isEmpty();
        assertThat(systemd.hasUnit("rsmap-42.scope")).isFalse();
    }

    @Test
    void update_openPolicyApplied_staysOpen_closingItIsRefused() throws Exception {
        // an open apply started no scope: the job's processes are in no unit a closed policy could be set on
        backend.apply("42", DevicePolicy.OPEN, 1234);
        backend.update("42", DevicePolicy.OPEN);
        assertThatThrownBy(() -> backend.update("42", grantedPolicy())).isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("open device policy");
        assertThat(systemd.calls()).isEmpty();
    }

    @Test
    void update_unitGone_isAnErrorNamingIt() throws Exception {
        backend.apply("42", grantedPolicy(), 1234);
        systemd.unitGone(true);
        assertThatThrownBy(() -> backend.update("42", NULL_ONLY)).isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("SetUnitProperties of unit rsmap-42.scope failed")
                .hasMessageContaining("org.freedesktop.systemd1.NoSuchUnit");
    }
}
