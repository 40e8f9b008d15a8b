// The writes that take a running job's v1 devices cgroup to a policy (the split into rooms join, dynamic reallocation update): a
// table of devices.list states and policies, and a seeded property test against a model of the kernel.
package rsmap.device.v1;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rsmap.device.DevicePolicy;
import rsmap.device.DeviceRule;
import rsmap.map.DeviceList.Mode;

class DevicesListTest {
    static DeviceRule rule(int major, int minor, Mode mode) {
        return new DeviceRule("/dev/d" + major + "_" + minor, 'c', major, minor, mode);
    }

    static DevicePolicy closed(DeviceRule... rules) {
        return new DevicePolicy(true, List.of(rules), List.of());
    }

    static final DeviceRule NULL = rule(1, 3, Mode.RW);
    static final DeviceRule GPU0 = rule(195, 0, Mode.RW);
    static final DeviceRule GPU1 = rule(195, 1, Mode.RW);

    /** devices.list | policy | the writes, in order. */
    static Stream<Arguments> rows() {
        return Stream.of(
                // a new cgroup, or one opened by an update: the kernel leaves default allow only by emptying the list
                Arguments.of("a *:* rwm\n", closed(GPU0, NULL),
                        List.of("devices.deny a", "devices.allow c 195:0 rw", "devices.allow c 1:3 rw")),
                // the same policy again (a later task of the job): allows only, nothing denied
                Arguments.of("c 195:0 rw\nc 1:3 rw\n", closed(GPU0, NULL),
                        List.of("devices.allow c 195:0 rw", "devices.allow c 1:3 rw")),
                // widen: the new device is allowed, nothing is denied
                Arguments.of("c 1:3 rw\nc 195:0 rw\n", closed(NULL, GPU0, GPU1),
                        List.of("devices.allow c 1:3 rw", "devices.allow c 195:0 rw", "devices.allow c 195:1 rw")),
                // narrow: what stays is allowed again first, then the device dropped is denied
                Arguments.of("c 1:3 rw\nc 195:0 rw\nc 195:1 rw\n", closed(NULL, GPU0),
                        List.of("devices.allow c 1:3 rw", "devices.allow c 195:0 rw", "devices.deny c 195:1 rw")),
                // a mode narrowed: the access dropped only
                Arguments.of("c 195:0 rw\n", closed(rule(195, 0, Mode.R)),
                        List.of("devices.allow c 195:0 r", "devices.deny c 195:0 w")),
                Arguments.of("c 195:0 r\n", closed(GPU0), List.of("devices.allow c 195:0 rw")),
                // one device under two paths, r and w: together rw, nothing denied
                Arguments.of("c 195:0 rw\n", closed(rule(195, 0, Mode.R), rule(195, 0, Mode.W)),
                        List.of("devices.allow c 195:0 r", "devices.allow c 195:0 w")),
                // accesses the policy never grants (mknod, a wildcard someone added) are denied
                Arguments.of("c 1:3 rwm\nc 136:* rw\n", closed(NULL),
                        List.of("devices.allow c 1:3 rw", "devices.deny c 1:3 m", "devices.deny c 136:* rw")),
                // closed with every basic missing: nothing allowed
                Arguments.of("c 1:3 rw\n", closed(), List.of("devices.deny c 1:3 rw")),
                Arguments.of("", closed(), List.of()),
                // closed to open: default allow; already open: nothing
                Arguments.of("c 1:3 rw\nc 195:0 rw\n", DevicePolicy.OPEN, List.of("devices.allow a")),
                Arguments.of("", DevicePolicy.OPEN, List.of("devices.allow a")),
                Arguments.of("a *:* rwm\n", DevicePolicy.OPEN, List.of()));
    }

    @ParameterizedTest(name = "{index}: {2}")
    @MethodSource("rows")
    void towards_listAndPolicy_writesInOrder(String list, DevicePolicy policy, List<String> writes) {
        assertThat(DevicesList.parse(list).towards(policy)).map(DevicesList.Write::toString).isEqualTo(writes);
    }

    @Test
    void parse_kernelLines_entriesByDevice_otherLinesSkipped() {
        DevicesList l = DevicesList.parse("c 1:3 rwm\n\nb 8:0 r\nnonsense\n");
        assertThat(l.entries()).containsExactly(Map.entry("c 1:3", "rwm"), Map.entry("b 8:0", "r"));
        assertThat(l.allowsAll()).isFalse();
        assertThat(DevicesList.parse("a *:* rwm\n").allowsAll()).isTrue();
    }

    /**
     * Every list and policy: the writes end in exactly the policy and, from a default-deny list, never allow
     * less than what both allow nor more than either does at any step (the model below is the kernel's
     * devices controller: devices.rst, "Hierarchy" and the exception list of a default-deny cgroup).
     */
    @Test
    void towards_randomListsAndPolicies_endExactlyInThePolicy_neverLessThanBothOnTheWay() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        for (int round = 0; round < 2000; round++) {
            Kernel start = Kernel.random(random);
            DevicePolicy policy = random.nextInt(10) == 0 ? DevicePolicy.OPEN : randomPolicy(random);
            Kernel want = Kernel.of(policy);
            Kernel now = start.copy();
            String where = "seed " + seed + " round " + round + ": " + start + " to " + policy;
            for (DevicesList.Write w : DevicesList.parse(start.toString()).towards(policy)) {
                now.write(w);
                if (!start.allowAll) {
                    for (String access : Kernel.UNIVERSE) {
                        boolean both = start.allows(access) && want.allows(access);
                        boolean either = start.allows(access) || want.allows(access);
                        if (both || !either) {
                            assertThat(now.allows(access)).as(where + " after " + w + ": " + access).isEqualTo(both);
                        }
                    }
                }
            }
            for (String access : Kernel.UNIVERSE) {
                assertThat(now.allows(access)).as(where + ": " + access).isEqualTo(want.allows(access));
            }
        }
    }

    static DevicePolicy randomPolicy(Random random) {
        List<DeviceRule> rules = new ArrayList<>();
        for (String device : Kernel.DEVICES) {
            if (random.nextBoolean()) {
                String[] mm = device.substring(2).split(":");
                rules.add(rule(Integer.parseInt(mm[0]), Integer.parseInt(mm[1]), Mode.values()[random.nextInt(3)]));
            }
        }
        return new DevicePolicy(true, rules, List.of());
    }

    /** The devices controller of one cgroup under an unrestricted parent: a default and an exception list. */
    static final class Kernel {
        static final List<String> DEVICES = List.of("c 1:3", "c 195:0", "c 195:1", "c 195:2");
        static final List<String> UNIVERSE = DEVICES.stream().flatMap(d -> Stream.of(d + " r", d + " w", d + " m"))
                .toList();
        boolean allowAll;
        final Map<String, Set<Character>> exceptions = new HashMap<>();

        static Kernel random(Random random) {
            Kernel k = new Kernel();
            k.allowAll = random.nextInt(6) == 0;
            if (!k.allowAll) {
                for (String d : DEVICES) {
                    Set<Character> a = new HashSet<>();
                    for (char c : "rwm".toCharArray()) {
                        if (random.nextInt(3) == 0) {
                            a.add(c);
                        }
                    }
                    if (!a.isEmpty()) {
                        k.exceptions.put(d, a);
                    }
                }
            }
            return k;
        }

        static Kernel of(DevicePolicy policy) {
            Kernel k = new Kernel();
            k.allowAll = policy.isOpen();
            for (DeviceRule r : policy.rules()) {
                k.allow(r.type() + " " + r.major() + ":" + r.minor(), r.mode().toString());
            }
            return k;
        }

        Kernel copy() {
            Kernel k = new Kernel();
            k.allowAll = allowAll;
            exceptions.forEach((d, a) -> k.exceptions.put(d, new HashSet<>(a)));
            return k;
        }

        boolean allows(String access) {
            int space = access.lastIndexOf(' ');
            return allowAll || exceptions.getOrDefault(access.substring(0, space), Set.of()).contains(access.charAt(space + 1));
        }

        /** devcgroup_update_access: "a" resets the default and empties the list; else a default-deny exception. */
        void write(DevicesList.Write w) {
            if (w.line().equals("a")) {
                allowAll = w.file().equals("devices.allow");
                exceptions.clear();
                return;
            }
            assertThat(allowAll).as("rsmapd writes exceptions only into a default-deny cgroup: " + w).isFalse();
            int space = w.line().lastIndexOf(' ');
            String device = w.line().substring(0, space);
            String access = w.line().substring(space + 1);
            if (w.file().equals("devices.allow")) {
                allow(device, access);
            } else {
                Set<Character> a = exceptions.getOrDefault(device, new HashSet<>());
                access.chars().forEach(c -> a.remove((char) c));
                if (a.isEmpty()) {
                    exceptions.remove(device);
                }
            }
        }

        private void allow(String device, String access) {
            Set<Character> a = exceptions.computeIfAbsent(device, d -> new HashSet<>());
            access.chars().forEach(c -> a.add((char) c));
        }

        /** As devices.list prints it. */
        @Override
        public String toString() {
            if (allowAll) {
                return "a *:* rwm\n";
            }
            StringBuilder b = new StringBuilder();
            for (String d : DEVICES) {
                Set<Character> a = exceptions.get(d);
                if (a != null) {
                    b.append(d).append(' ');
                    for (char c : "rwm".toCharArray()) {
                        if (a.contains(c)) {
                            b.append(c);
                        }
                    }
                    b.append('\n');
                }
            }
            return b.toString();
        }
    }
}
