// Isolation modes: required turns a backend failure into an error, optional into a precise warning.
package rsmap.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;

import java.util.List;
import org.junit.jupiter.api.Test;

class IsolationTest {
    static final DevicePolicy CLOSED = new DevicePolicy(true,
            List.of(new DeviceRule("/dev/null", 'c', 1, 3, rsmap.map.DeviceList.Mode.RW)), List.of());

    /** A backend that cannot enforce anything: Mockito injects the fault, nothing real is replaced. */
    static DeviceBackend failing() throws DevicePolicyException {
        DeviceBackend b = mock(DeviceBackend.class);
        doThrow(new DevicePolicyException("cgroup write refused")).when(b).apply(anyString(), any(DevicePolicy.class),
                any(long[].class));
        return b;
    }

    @Test
    void apply_required_failure_isAnError() throws Exception {
        Isolation iso = new Isolation(failing(), Isolation.Mode.REQUIRED);
        assertThatThrownBy(() -> iso.apply("7", CLOSED, 42L)).isInstanceOf(DevicePolicyException.class)
                .hasMessage("cgroup write refused");
    }

    @Test
    void apply_optional_failure_warnsExactlyWhatIsUnenforced() throws Exception {
        Isolation iso = new Isolation(failing(), Isolation.Mode.OPTIONAL);
        assertThat(iso.apply("7", CLOSED, 42L)).hasValue("job 7: device isolation is NOT enforced (isolation=optional): "
                + "the job can reach every device of the host, not only 1 granted; cgroup write refused");
    }

    @Test
    void apply_dryRun_recordsWithoutEnforcing() throws Exception {
        DryRunBackend dry = new DryRunBackend();
        Isolation iso = new Isolation(dry, Isolation.Mode.REQUIRED);
        assertThat(iso.apply("7", CLOSED)).isEmpty();
        iso.remove("7");
        assertThat(dry.log()).containsExactly("job=7 would apply devices.deny a; devices.allow c 1:3 rw",
                "job=7 would remove its policy");
    }

    @Test
    void apply_missingPaths_areReported() throws Exception {
        DevicePolicy withMissing = new DevicePolicy(true, CLOSED.rules(), List.of("/dev/nvidia9"));
        assertThat(new Isolation(new DryRunBackend(), Isolation.Mode.REQUIRED).apply("7", withMissing))
                .hasValue("job 7: device paths missing on this host were left out: [/dev/nvidia9]");
    }
}
