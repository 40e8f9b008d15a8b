// Device isolation through systemd over D-Bus: DevicePolicy=closed and DeviceAllow= on the job's scope.
package rsmap.device.systemd;

import static rsmap.device.systemd.UnitProperty.deviceAllow;
import static rsmap.device.systemd.UnitProperty.devicePolicy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.freedesktop.dbus.messages.Error;
import org.freedesktop.dbus.messages.Message;
import org.freedesktop.dbus.types.UInt32;
import org.freedesktop.dbus.types.Variant;
import rsmap.device.DeviceBackend;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;

/**
 * backend 1 (cgroup v2 hosts, where systemd owns the BPF device programs). A closed policy is
 * set on a systemd unit as {@code DevicePolicy=closed} plus one {@code DeviceAllow=} entry per device:
 * <ul>
 *   <li>where execd already runs the job in a scope of its own (Open Cluster Scheduler:
 *       {@code ocs<port>.<job>[.<task>][.master].scope}, the unit systemd names for the entering process, or
 *       the {@code existingScope} resolver's) the policy is set on that scope with {@code SetUnitProperties},
 *       so the job is not split over two units and execd still accounts and signals all of it;</li>
 *   <li>otherwise the job's processes are moved into a new transient scope {@code rsmap-<job>.scope}
 *       with {@code StartTransientUnit}; a later task of the same job (the Slurm plugin enters each task)
 *       joins that scope with {@code AttachProcessesToUnit} (systemd 238 and later), whether rsmapd
 *       remembers the scope or systemd answers {@code UnitExists} (after a restart of rsmapd, or two
 *       tasks entering at once). Joining sets the scope's device properties again first when the
 *       policy differs from the one known to be applied.</li>
 * </ul>
 * {@link #update} sets the new policy on the job's unit. Removing stops the transient scope,
 * or resets the execd scope to {@code DevicePolicy=auto} with an empty {@code DeviceAllow}; before that,
 * at job end, {@link #processes} says whether the job left processes in execd's scope, which then stays
 * closed off every device until they exit (rsmapd's Leftovers). Every D-Bus
 * failure becomes a {@link DevicePolicyException} naming the unit and the D-Bus error name
 * ({@link SystemdBus}).
 *
 * <p>What was applied lives in memory only: a unit rsmapd forgot (after a restart) ends with the job
 * anyway, since systemd collects an empty scope; an update of a job forgotten so is refused.
 */
public final class SystemdBackend implements DeviceBackend, AutoCloseable {
    /** The system bus, where systemd's manager is {@code org.freedesktop.systemd1}. */
    public static final String SYSTEM_BUS = "unix:path=/run/dbus/system_bus_socket";
    /** systemd's private socket: a direct (peer-to-peer) connection, usable without a dbus daemon. */
    public static final String PRIVATE_SOCKET = "unix:path=/run/systemd/private";
    /** No execd scope: every job gets a transient scope of its own. */
    public static final Function<String, Optional<String>> NO_EXISTING_SCOPE = job -> Optional.empty();

    /** What a job name may contain to make a unit name (a subset of systemd's unit-name characters). */
    private static final Pattern JOB = Pattern.compile("[A-Za-z0-9_.-]{1,200}");
    private static final String NO_SUCH_UNIT = "org.freedesktop.systemd1.NoSuchUnit";
    /** GetUnitByPID's answer for a process in no unit (yet). */
    private static final String NO_UNIT_FOR_PID = "org.freedesktop.systemd1.NoUnitForPID";
    private static final String UNIT_EXISTS = "org.freedesktop.systemd1.UnitExists";

    private final SystemdBus bus;
    private final Function<String, Optional<String>> existingScope;
    /** The unit each job with an applied closed policy is under, and the policy set on it since. */
    private final Map<String, Applied> applied = new ConcurrentHashMap<>();
    /** The jobs applied an open policy and in no unit of rsmapd (nothing was sent for them). */
    private final Set<String> openJobs = ConcurrentHashMap.newKeySet();

    /**
     * @param address       a D-Bus address: {@link #SYSTEM_BUS}, a test bus, or {@link #PRIVATE_SOCKET}
     * @param direct        whether {@code address} is systemd's own socket (no bus names, no Hello)
     * @param existingScope the unit name of the scope execd already runs a job in, if any
     */
    public SystemdBackend(String address, boolean direct, Function<String, Optional<String>> existingScope) {
        this.bus = new SystemdBus(address, direct);
        this.existingScope = Objects.requireNonNull(existingScope);
    }

    /** The system bus, with a transient scope per job. */
    public static SystemdBackend systemBus() {
        return new SystemdBackend(SYSTEM_BUS, false, NO_EXISTING_SCOPE);
    }

    /** The scope Open Cluster Scheduler's execd on {@code port} runs a job or array task in. */
    public static String ocsScope(int port, String job, Optional<String> task) {
        return "ocs" + port + "." + job + task.map(t -> "." + t).orElse("") + ".scope";
    }

    /** The transient scope rsmapd creates for a job. */
    public static String transientScope(String job) throws DevicePolicyException {
        if (!JOB.matcher(job).matches()) {
            throw new DevicePolicyException("job name '" + job + "' cannot name a systemd unit (letters, digits, . _ -)");
        }
        return "rsmap-" + job + ".scope";
    }

    @Override
    public String name() {
        return "systemd";
    }

    /** Connects and asks the manager for its version, a cheap read that any systemd answers. */
    @Override
    public Availability availability() {
        try {
            bus.ping();
            return Availability.yes();
        } catch (DevicePolicyException e) {
            return Availability.no("systemd's manager does not answer on " + bus.address() + ": " + e.getMessage());
        }
    }

    @Override
    public void apply(String job, DevicePolicy policy, long... pids) throws DevicePolicyException {
        if (policy.isOpen()) {
            if (!applied.containsKey(job)) {
                openJobs.add(job);
            }
            return; // Grid Engine's RSMAP manual: a job that does not request the map is not restricted by it
        }
        Optional<String> existing = existingScope.apply(job);
        if (existing.isEmpty() && pids.length > 0) {
            existing = execdScopeOf(job, pids[0]);
        }
        List<UnitProperty> properties = new ArrayList<>();
        if (existing.isPresent()) {
            String unit = existing.get();
            // execd moved the job's processes already (a later task's too); only the device properties change,
            // and a later task of the job sets the same ones again. runtime=true:
            // the setting dies with the unit and is never written to /etc. SetUnitProperties appends to
            // DeviceAllow, so what the scope already allows (execd honours a user-set
            // SGE_DEBUG_DEVICES_ALLOW) is reset first: nothing the job's owner controls widens the grant.
            bus.manager(unit, null, "SetUnitProperties", unit, true, List.of(deviceAllow(List.of())));
            properties.add(devicePolicy("closed"));
            properties.add(deviceAllow(policy.rules()));
            bus.manager(unit, null, "SetUnitProperties", unit, true, properties);
            applied.put(job, new Applied(unit, false, policy));
            return;
        }
        String unit = transientScope(job);
        if (pids.length == 0) {
            throw new DevicePolicyException("cannot start scope " + unit + " for job " + job
                    + ": systemd refuses a scope without processes and no PID was given");
        }
        List<UInt32> scopePids = new ArrayList<>();
        for (long pid : pids) {
            if (pid <= 0 || pid > 0xffffffffL) {
                throw new DevicePolicyException("cannot start scope " + unit + ": " + pid + " is not a PID");
            }
            scopePids.add(new UInt32(pid));
        }
        Applied known = applied.get(job);
        if (known != null && known.transientScope()) {
            if (join(job, unit, policy, Optional.of(known.policy()), scopePids, true)) {
                return;
            }
            applied.remove(job); // systemd collected the scope when its last process ended: start it again
        }
        properties.add(new UnitProperty("PIDs", new Variant<>(scopePids, "au")));
        // Delegate=yes: systemd moves processes into a running unit (AttachProcessesToUnit, the job's later
        // tasks) only if it is delegated ("Process migration not available on non-delegated units"). The
        // subtree is root's (a scope has no User=), so the job's owner still cannot touch its cgroups, and
        // a device program below the scope can only narrow what systemd's own program on it allows.
        properties.add(new UnitProperty("Delegate", new Variant<>(Boolean.TRUE)));
        properties.add(devicePolicy("closed"));
        properties.add(deviceAllow(policy.rules()));
        // mode "fail": a scope of that name that already exists is not replaced but answers UnitExists: the
        // job's scope, started before rsmapd restarted or by another task of the job a moment ago; join it.
        Message reply = bus.manager(unit, UNIT_EXISTS, "StartTransientUnit", unit, "fail", properties, List.<AuxUnit>of());
        if (reply instanceof Error) {
            join(job, unit, policy, Optional.empty(), scopePids, false);
            return;
        }
        applied.put(job, new Applied(unit, true, policy));
        awaitIn(unit, scopePids);
    }

    /**
     * StartTransientUnit answers once the start job is queued, not done: the starter would exec the job
     * before its process is in the scope, under no device policy at all. Waits until systemd names the
     * scope as the unit of every process (GetUnitByPID), and refuses when it does not within the method
     * timeout: fail closed.
     */
    private void awaitIn(String unit, List<UInt32> pids) throws DevicePolicyException {
        String want = unitPath(unit);
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SystemdBus.TIMEOUT_MS);
        for (UInt32 pid : pids) {
            for (;;) {
                Message r = bus.manager(unit, NO_UNIT_FOR_PID, "GetUnitByPID", pid);
                Object path = r instanceof Error ? null : SystemdBus.firstParameter(r);
                if (path != null && want.equals(path.toString())) {
                    break;
                }
                if (System.nanoTime() > until) {
                    throw new DevicePolicyException("process " + pid + " is not in unit " + unit + " " + SystemdBus.TIMEOUT_MS
                            + " ms after systemd took it (it names " + path + ")");
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new DevicePolicyException("interrupted waiting for unit " + unit, e);
                }
            }
        }
    }

    /**
     * The scope execd runs this very job in, when the entering process {@code pid} is in it: Open Cluster
     * Scheduler's {@code ocs<port>.<job>[.<task>][.master].scope} (enable_systemd), as systemd names the
     * process's unit (GetUnitByPID). The job then stays in execd's scope (execd accounts and signals it
     * there) and the policy is set on it; a process in any other unit gets a transient scope of its own.
     */
    private Optional<String> execdScopeOf(String job, long pid) throws DevicePolicyException {
        if (pid <= 0 || pid > 0xffffffffL) {
            return Optional.empty(); // refused with the transient scope's reason
        }
        Message r = bus.manager("of process " + pid, NO_UNIT_FOR_PID, "GetUnitByPID", new UInt32(pid));
        Object path = r instanceof Error ? null : SystemdBus.firstParameter(r);
        return path == null ? Optional.empty() : unitName(path.toString()).filter(u -> isExecdScope(u, job));
    }

    /** Whether {@code unit} is Open Cluster Scheduler's scope of {@code job} (its array task, its PE master). */
    static boolean isExecdScope(String unit, String job) {
        return unit.matches("ocs[0-9]{1,5}\\." + Pattern.quote(job) + "(\\.master)?\\.scope");
    }

    /** The unit name of an object path {@link #unitPath} makes; empty for any other path. */
    static Optional<String> unitName(String path) {
        String prefix = "/org/freedesktop/systemd1/unit/";
        if (!path.startsWith(prefix)) {
            return Optional.empty();
        }
        StringBuilder b = new StringBuilder();
        for (int i = prefix.length(); i < path.length(); i++) {
            char c = path.charAt(i);
            if (c != '_') {
                b.append(c);
            } else if (i + 2 < path.length() && path.substring(i + 1, i + 3).matches("[0-9a-f]{2}")) {
                b.append((char) Integer.parseInt(path.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                return Optional.empty();
            }
        }
        return Optional.of(b.toString());
    }

    /** A unit's object path (sd-bus's bus_label_escape: a leading digit and all but [A-Za-z0-9] as _xx). */
    static String unitPath(String unit) {
        StringBuilder b = new StringBuilder("/org/freedesktop/systemd1/unit/");
        for (int i = 0; i < unit.length(); i++) {
            char c = unit.charAt(i);
            boolean keep = c < 128 && (Character.isLetter(c) || i > 0 && Character.isDigit(c));
            b.append(keep ? String.valueOf(c) : String.format("_%02x", (int) c));
        }
        return b.toString();
    }

    /**
     * Moves {@code pids} into the job's running scope. When the policy on the scope is not known to be
     * {@code policy} (unknown after UnitExists, or changed since), the scope's properties are set first, in
     * one call so systemd never realises the list half-reset ({@link UnitProperty#devices}); the new
     * processes then never run under a wider policy than this one. Returns false, having changed nothing, when {@code mayBeGone} and
     * systemd answers NoSuchUnit.
     */
    private boolean join(String job, String unit, DevicePolicy policy, Optional<DevicePolicy> onScope, List<UInt32> pids,
            boolean mayBeGone) throws DevicePolicyException {
        String gone = mayBeGone ? NO_SUCH_UNIT : null;
        if (!onScope.equals(Optional.of(policy))) {
            Message set = bus.manager(unit, gone, "SetUnitProperties", unit, true, UnitProperty.devices(policy));
            if (set instanceof Error) {
                return false;
            }
        }
        // "": the scope's own cgroup, not a sub-cgroup
        if (bus.manager(unit, gone, "AttachProcessesToUnit", unit, "", pids) instanceof Error) {
            return false;
        }
        applied.put(job, new Applied(unit, true, policy));
        awaitIn(unit, pids);
        return true;
    }

    /**
     * one {@code SetUnitProperties} on the job's unit ({@link UnitProperty#devices}), runtime only,
     * so systemd never realises the list half-reset; the processes in the unit and those they start get
     * the new policy. On a cgroup v2 host systemd replaces the unit's BPF device program whole; on a v1 host
     * it rewrites the unit's devices cgroup ({@code a} denied, then the allows), a moment of less that
     * rsmapd cannot order otherwise. An open policy is {@code DevicePolicy=auto} with no DeviceAllow (no
     * restriction) on the same unit, which keeps the job's processes, so a later update can close it again.
     * A unit gone meanwhile (NoSuchUnit) is an error: nothing holds the job's processes any more.
     */
    @Override
    public void update(String job, DevicePolicy policy) throws DevicePolicyException {
        Applied a = applied.get(job);
        if (a == null) {
            if (!openJobs.contains(job)) {
                throw DevicePolicyException.noPolicy(job);
            }
            if (!policy.isOpen()) {
                throw DevicePolicyException.openCannotClose(job);
            }
            return;
        }
        bus.manager(a.unit(), null, "SetUnitProperties", a.unit(), true, UnitProperty.devices(policy));
        applied.put(job, new Applied(a.unit(), a.transientScope(), policy));
    }

    @Override
    public void remove(String job) throws DevicePolicyException {
        openJobs.remove(job);
        Applied a = applied.get(job);
        if (a == null) {
            return;
        }
        if (a.transientScope()) {
            // NoSuchUnit: the scope ended with its last process, nothing left to remove
            bus.manager(a.unit(), NO_SUCH_UNIT, "StopUnit", a.unit(), "fail");
        } else {
            // DeviceAllow=[] (SetUnitProperties appends to the list otherwise), then DevicePolicy=auto.
            // NoSuchUnit: execd's scope ended with the job
            bus.manager(a.unit(), NO_SUCH_UNIT, "SetUnitProperties", a.unit(), true,
                    UnitProperty.devices(DevicePolicy.OPEN));
        }
        applied.remove(job);
    }

    /**
     * The processes in execd's scope of the job (GetUnitProcesses, systemd 238 and later): at job end
     * rsmapd closes the scope off every device while any is left there, rather than resetting it to
     * {@code DevicePolicy=auto}, which would open every device to a process the job left behind (execd's
     * scope lives on until its last process exits). None once the scope is gone (NoSuchUnit), and none
     * for a job without a closed policy applied. Empty - cannot list - for the transient scope rsmapd made:
     * removing it (StopUnit) ends every process in it, so none is left to look after.
     */
    @Override
    public Optional<List<Long>> processes(String job) throws DevicePolicyException {
        Applied a = applied.get(job);
        if (a == null) {
            return Optional.of(List.of());
        }
        if (a.transientScope()) {
            return Optional.empty();
        }
        Message r = bus.manager(a.unit(), NO_SUCH_UNIT, "GetUnitProcesses", a.unit());
        if (r instanceof Error) {
            return Optional.of(List.of()); // the scope ended with its last process
        }
        return Optional.of(pids(a.unit(), SystemdBus.firstParameter(r)));
    }

    /** The PIDs of GetUnitProcesses' answer {@code a(sus)}, however dbus-java hands the structs over. */
    static List<Long> pids(String unit, Object listed) throws DevicePolicyException {
        List<?> entries = listed instanceof Object[] array ? List.of(array) : listed instanceof List<?> l ? l : null;
        if (entries == null) {
            throw new DevicePolicyException("GetUnitProcesses of unit " + unit + " answered " + listed
                    + ", not a list of processes");
        }
        List<Long> pids = new ArrayList<>();
        for (Object e : entries) {
            Object[] fields = e instanceof Object[] f ? f : e instanceof org.freedesktop.dbus.Struct s
                    ? s.getParameters() : new Object[0];
            if (fields.length != 3 || !(fields[1] instanceof Number pid)) {
                throw new DevicePolicyException("GetUnitProcesses of unit " + unit + " answered an entry that is not"
                        + " (cgroup, pid, command): " + e);
            }
            pids.add(pid.longValue());
        }
        return pids;
    }

    /** The unit a job's policy is applied on, if any. */
    public Optional<String> unitOf(String job) {
        return Optional.ofNullable(applied.get(job)).map(Applied::unit);
    }

    @Override
    public void close() {
        bus.close();
    }

    /** The unit a job's policy was applied on, whether rsmapd created it, and the policy set on it. */
    private record Applied(String unit, boolean transientScope, DevicePolicy policy) {
    }
}
