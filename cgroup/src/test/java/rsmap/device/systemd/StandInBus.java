// Test base: the systemd backend against a real private dbus-daemon and the stand-in for systemd's manager,
// one bus and stand-in per test class (reset before each test), a fresh backend per test.
package rsmap.device.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.freedesktop.dbus.types.Variant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import rsmap.device.DevicePolicy;
import rsmap.device.FakeDevices;

abstract class StandInBus {
    static PrivateBus bus;
    static SystemdStandIn systemd;
    /** Jobs named "ocs…" run in execd's scope ocs6445.17.3.scope; any other job in a scope of its own. */
    SystemdBackend backend;

    @BeforeAll
    static void startBus() throws Exception {
        bus = PrivateBus.start();
        systemd = new SystemdStandIn(bus.address());
    }

    @AfterAll
    static void stopBus() throws Exception {
        try (PrivateBus closedLast = bus; SystemdStandIn closedFirst = systemd) {
            // each closed where it started (null is skipped): the stand-in, then the bus
        }
    }

    @BeforeEach
    void setUp() {
        systemd.reset();
        backend = new SystemdBackend(bus.address(), false,
                job -> job.startsWith("ocs") ? Optional.of(SystemdBackend.ocsScope(6445, "17", Optional.of("3")))
                        : Optional.empty());
    }

    @AfterEach
    void tearDown() {
        backend.close();
    }

    /** The policy of a host where the granted GPU lists /dev/null read-only and /dev/ptmx read-only. */
    static DevicePolicy grantedPolicy() throws Exception {
        return DevicePolicy.of(FakeDevices.instances("gpu=1(g[devices=/dev/null:r;/dev/ptmx:r])"));
    }

    /** Received a(ss) arrives as a list of Object[] (path, rights): flatten to "path rights". */
    static List<String> deviceAllow(Variant<?> v) {
        assertThat(v.getSig()).isEqualTo("a(ss)");
        List<String> out = new ArrayList<>();
        for (Object entry : (List<?>) v.getValue()) {
            Object[] pair = (Object[]) entry;
            assertThat(pair).hasSize(2).allMatch(String.class::isInstance);
            out.add(pair[0] + " " + pair[1]);
        }
        return out;
    }

    /** The (method, unit) of every call so far. */
    static List<String> sent() {
        return systemd.calls().stream().map(c -> c.method() + " " + c.unit()).toList();
    }
}
