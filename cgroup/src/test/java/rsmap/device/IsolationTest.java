// Isolation modes: required turns a backend failure into an error, optional into a precise warning, for
// applying a policy and for updating a running job's policy.
package rsmap.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.doThrow;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;

import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

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

    // updating a running job's policy, with the modes of apply.

    /** mode | whether the backend's update fails | the warning returned, or the message thrown (REQUIRED). */
    static Stream<Arguments> updates() {
        return Stream.of(
                Arguments.of(Isolation.Mode.REQUIRED, false, Optional.empty()),
                Arguments.of(Isolation.Mode.REQUIRED, true, Optional.of("thrown: cgroup write refused")),
                Arguments.of(Isolation.Mode.OPTIONAL, false, Optional.empty()),
                Arguments.of(Isolation.Mode.OPTIONAL, true, Optional.of("job 7: device policy NOT updated "
                        + "(isolation=optional): the job may reach devices no longer granted, or miss some of the 1 "
                        + "granted now; cgroup write refused")),
                // off: the backend is never asked
                Arguments.of(Isolation.Mode.OFF, false, Optional.empty()),
                Arguments.of(Isolation.Mode.OFF, true, Optional.empty()));
    }

    @ParameterizedTest(name = "{0} failing={1}")
    @MethodSource("updates")
    void update_eachMode_likeApply(Isolation.Mode mode, boolean fails, Optional<String> expected) throws Exception {
        DeviceBackend backend = mock(DeviceBackend.class);
        if (fails) {
            doThrow(new DevicePolicyException("cgroup write refused")).when(backend).update(anyString(),
                    any(DevicePolicy.class));
        }
        Isolation iso = new Isolation(backend, mode);
        if (expected.isPresent() && expected.get().startsWith("thrown: ")) {
            assertThatThrownBy(() -> iso.update("7", CLOSED)).isInstanceOf(DevicePolicyException.class)
                    .hasMessage(expected.get().substring("thrown: ".length()));
        } else {
            assertThat(iso.update("7", CLOSED)).isEqualTo(expected);
        }
        if (mode == Isolation.Mode.OFF) {
            verifyNoInteractions(backend);
        } else {
            verify(backend).update("7", CLOSED);
        }
    }

    @Test
    void update_dryRun_recordsLikeApply_andRefusesAJobWithoutPolicy() throws Exception {
        DryRunBackend dry = new DryRunBackend();
        Isolation iso = new Isolation(dry, Isolation.Mode.REQUIRED);
        assertThatThrownBy(() -> iso.update("7", CLOSED)).isInstanceOf(DevicePolicyException.class)
                .hasMessage("job 7 has no device policy applied: an update replaces a policy, it never creates one");
        iso.apply("7", CLOSED);
        assertThat(iso.update("7", DevicePolicy.OPEN)).isEmpty();
        assertThat(iso.update("7", CLOSED)).isEmpty();
        assertThat(dry.applied()).containsEntry("7", CLOSED);
        iso.remove("7");
        assertThat(dry.log()).containsExactly("job=7 would apply devices.deny a; devices.allow c 1:3 rw",
                "job=7 would update to no restriction", "job=7 would update to devices.deny a; devices.allow c 1:3 rw",
                "job=7 would remove its policy");
        assertThat(new Isolation(dry, Isolation.Mode.OPTIONAL).update("7", CLOSED)).get(STRING)
                .endsWith("has no device policy applied: an update replaces a policy, it never creates one");
    }

    @Test
    void update_dryRun_openAppliedJob_closingItIsRefused() throws Exception {
        // as the real backends: an open apply holds no process that a closed policy could reach
        DryRunBackend dry = new DryRunBackend();
        dry.apply("7", DevicePolicy.OPEN);
        dry.update("7", DevicePolicy.OPEN);
        assertThatThrownBy(() -> dry.update("7", CLOSED)).isInstanceOf(DevicePolicyException.class)
                .hasMessageContaining("open device policy");
    }

    @Test
    void update_missingPaths_areReported() throws Exception {
        DryRunBackend dry = new DryRunBackend();
        dry.apply("7", CLOSED);
        DevicePolicy withMissing = new DevicePolicy(true, CLOSED.rules(), List.of("/dev/nvidia9"));
        assertThat(new Isolation(dry, Isolation.Mode.REQUIRED).update("7", withMissing))
                .hasValue("job 7: device paths missing on this host were left out: [/dev/nvidia9]");
    }
}
