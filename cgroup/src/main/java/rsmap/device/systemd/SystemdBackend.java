// Device isolation through systemd over D-Bus: DevicePolicy=closed and DeviceAllow= on the job's scope.
package rsmap.device.systemd;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.freedesktop.dbus.DBusAsyncReply;
import org.freedesktop.dbus.connections.AbstractConnection;
import org.freedesktop.dbus.connections.impl.DBusConnection;
import org.freedesktop.dbus.connections.impl.DBusConnectionBuilder;
import org.freedesktop.dbus.connections.impl.DirectConnection;
import org.freedesktop.dbus.connections.impl.DirectConnectionBuilder;
import org.freedesktop.dbus.exceptions.DBusException;
import org.freedesktop.dbus.exceptions.DBusExecutionException;
import org.freedesktop.dbus.interfaces.DBusInterface;
import org.freedesktop.dbus.interfaces.Properties;
import org.freedesktop.dbus.messages.Error;
import org.freedesktop.dbus.messages.Message;
import org.freedesktop.dbus.types.UInt32;
import org.freedesktop.dbus.types.Variant;
import rsmap.device.DeviceBackend;
import rsmap.device.DevicePolicy;
import rsmap.device.DevicePolicyException;
import rsmap.device.DeviceRule;

/**
 * Issue 4, backend 1 (cgroup v2 hosts, where systemd owns the BPF device programs). A closed policy is
 * set on a systemd unit as {@code DevicePolicy=closed} plus one {@code DeviceAllow=} entry per device:
 * <ul>
 *   <li>where execd already runs the job in a scope of its own (Open Cluster Scheduler:
 *       {@code ocs<port>.<job>[.<task>].scope}, found by the {@code existingScope} resolver) the policy
 *       is set on that scope with {@code SetUnitProperties}, so the job is not split over two units;</li>
 *   <li>otherwise the job's processes are moved into a new transient scope {@code rsmap-<job>.scope}
 *       with {@code StartTransientUnit}; a later task of the same job (the Slurm plugin enters each task)
 *       joins that scope with {@code AttachProcessesToUnit} (systemd 238 and later), whether rsmapd
 *       remembers the scope or systemd answers {@code UnitExists} (after a restart of rsmapd, or two
 *       tasks entering at once). Joining sets the scope's device properties again first when the
 *       policy differs from the one known to be applied.</li>
 * </ul>
 * Removing stops the transient scope, or resets the execd scope to {@code DevicePolicy=auto} with an
 * empty {@code DeviceAllow}. Every D-Bus failure becomes a {@link DevicePolicyException} naming the
 * unit and the D-Bus error name, which dbus-java's proxies would lose (they map an error name to a
 * Java class of that name and fall back to a nameless exception), so calls go through
 * {@link #call} and read the reply message instead.
 *
 * <p>What was applied lives in memory only: a unit rsmapd forgot (after a restart) ends with the job
 * anyway, since systemd collects an empty scope.
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
    private static final long TIMEOUT_MS = 25_000; // systemd's own default method timeout

    private final String address;
    private final boolean direct;
    private final Function<String, Optional<String>> existingScope;
    /** The unit each job with an applied closed policy is under; absent for open policies. */
    private final Map<String, Applied> applied = new ConcurrentHashMap<>();
    /** Guarded by this; null until first use and after a failed connection. */
    private AbstractConnection connection;
    private Systemd1 manager;

    /**
     * @param address       a D-Bus address: {@link #SYSTEM_BUS}, a test bus, or {@link #PRIVATE_SOCKET}
     * @param direct        whether {@code address} is systemd's own socket (no bus names, no Hello)
     * @param existingScope the unit name of the scope execd already runs a job in, if any
     */
    public SystemdBackend(String address, boolean direct, Function<String, Optional<String>> existingScope) {
        this.address = Objects.requireNonNull(address);
        this.direct = direct;
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
            call(Systemd1.BUS_NAME, null, remote(Properties.class), "Get", Systemd1.INTERFACE, "Version");
            return Availability.yes();
        } catch (DevicePolicyException e) {
            return Availability.no("systemd's manager does not answer on " + address + ": " + e.getMessage());
        }
    }

    @Override
    public void apply(String job, DevicePolicy policy, long... pids) throws DevicePolicyException {
        if (policy.isOpen()) {
            return; // seed 002: a job that does not request the map is not restricted by it
        }
        Optional<String> existing = existingScope.apply(job);
        List<UnitProperty> properties = new ArrayList<>();
        if (existing.isPresent()) {
            String unit = existing.get();
            // execd moved the job's processes already (a later task's too); only the device properties change,
            // and a later task of the job sets the same ones again. runtime=true:
            // the setting dies with the unit and is never written to /etc. SetUnitProperties appends to
            // DeviceAllow, so what the scope already allows (execd honours a user-set
            // SGE_DEBUG_DEVICES_ALLOW) is reset first: nothing the job's owner controls widens the grant.
            call(unit, null, manager(), "SetUnitProperties", unit, true, List.of(deviceAllow(List.of())));
            properties.add(devicePolicy("closed"));
            properties.add(deviceAllow(policy.rules()));
            call(unit, null, manager(), "SetUnitProperties", unit, true, properties);
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
        Message reply = call(unit, UNIT_EXISTS, manager(), "StartTransientUnit", unit, "fail", properties, List.<AuxUnit>of());
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
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        for (UInt32 pid : pids) {
            for (;;) {
                Message r = call(unit, NO_UNIT_FOR_PID, manager(), "GetUnitByPID", pid);
                Object path = r instanceof Error ? null : firstParameter(r);
                if (path != null && want.equals(path.toString())) {
                    break;
                }
                if (System.nanoTime() > until) {
                    throw new DevicePolicyException("process " + pid + " is not in unit " + unit + " " + TIMEOUT_MS
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

    private static Object firstParameter(Message m) {
        try {
            Object[] p = m.getParameters();
            return p != null && p.length > 0 ? p[0] : null;
        } catch (DBusException e) {
            return null;
        }
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
     * one call so systemd never realises the list half-reset: the empty DeviceAllow resets the list
     * (systemd.resource-control(5)), then the policy's entries; the new processes then never run under a
     * wider policy than this one. Returns false, having changed nothing, when {@code mayBeGone} and
     * systemd answers NoSuchUnit.
     */
    private boolean join(String job, String unit, DevicePolicy policy, Optional<DevicePolicy> onScope, List<UInt32> pids,
            boolean mayBeGone) throws DevicePolicyException {
        String gone = mayBeGone ? NO_SUCH_UNIT : null;
        if (!onScope.equals(Optional.of(policy))) {
            Message set = call(unit, gone, manager(), "SetUnitProperties", unit, true,
                    List.of(deviceAllow(List.of()), devicePolicy("closed"), deviceAllow(policy.rules())));
            if (set instanceof Error) {
                return false;
            }
        }
        // "": the scope's own cgroup, not a sub-cgroup
        if (call(unit, gone, manager(), "AttachProcessesToUnit", unit, "", pids) instanceof Error) {
            return false;
        }
        applied.put(job, new Applied(unit, true, policy));
        awaitIn(unit, pids);
        return true;
    }

    @Override
    public void remove(String job) throws DevicePolicyException {
        Applied a = applied.get(job);
        if (a == null) {
            return;
        }
        if (a.transientScope()) {
            // NoSuchUnit: the scope ended with its last process, nothing left to remove
            call(a.unit(), NO_SUCH_UNIT, manager(), "StopUnit", a.unit(), "fail");
        } else {
            // SetUnitProperties appends DeviceAllow= entries to the unit's list rather than replacing it;
            // only an empty list resets it (systemd.resource-control(5): "assigning the empty string
            // resets the list"), so the reset sends DeviceAllow=[] and then reopens the policy.
            List<UnitProperty> reset = List.of(deviceAllow(List.of()), devicePolicy("auto"));
            // NoSuchUnit: execd's scope ended with the job
            call(a.unit(), NO_SUCH_UNIT, manager(), "SetUnitProperties", a.unit(), true, reset);
        }
        applied.remove(job);
    }

    /** The unit a job's policy is applied on, if any. */
    public Optional<String> unitOf(String job) {
        return Optional.ofNullable(applied.get(job)).map(Applied::unit);
    }

    @Override
    public synchronized void close() {
        if (connection != null) {
            connection.disconnect();
            connection = null;
            manager = null;
        }
    }

    static UnitProperty devicePolicy(String policy) {
        return new UnitProperty("DevicePolicy", new Variant<>(policy));
    }

    /** DeviceAllow as a(ss): (path, rights) with rights r, w or rw, the modes of the devices characteristic. */
    static UnitProperty deviceAllow(List<DeviceRule> rules) {
        List<DeviceAccess> entries = new ArrayList<>();
        for (DeviceRule r : rules) {
            entries.add(new DeviceAccess(r.path(), r.mode().toString()));
        }
        return new UnitProperty("DeviceAllow", new Variant<>(entries, "a(ss)"));
    }

    private synchronized AbstractConnection connection() throws DevicePolicyException {
        if (connection == null || !connection.isConnected()) {
            // dbus-java takes about ten seconds to give up on a socket that is not there; say so at once
            if (address.startsWith("unix:path=")) {
                String socket = address.substring("unix:path=".length()).split(",", 2)[0];
                if (!Files.exists(Path.of(socket))) {
                    throw new DevicePolicyException("cannot connect to D-Bus at " + address + ": no socket " + socket);
                }
            }
            try {
                // Not shared: dbus-java caches shared connections per address, and a caller's disconnect
                // would close it under every other user in the JVM.
                connection = direct
                        ? DirectConnectionBuilder.forAddress(address).build()
                        : DBusConnectionBuilder.forAddress(address).withShared(false).build();
            } catch (DBusException | RuntimeException e) {
                throw new DevicePolicyException("cannot connect to D-Bus at " + address + ": " + e.getMessage(), e);
            }
            manager = null;
        }
        return connection;
    }

    private synchronized Systemd1 manager() throws DevicePolicyException {
        if (manager == null) {
            manager = remote(Systemd1.class);
        }
        return manager;
    }

    /** A proxy for systemd's manager object; a direct connection has no bus names. */
    private synchronized <T extends DBusInterface> T remote(Class<T> type) throws DevicePolicyException {
        AbstractConnection c = connection();
        try {
            return c instanceof DirectConnection
                    ? ((DirectConnection) c).getRemoteObject(Systemd1.OBJECT_PATH, type)
                    : ((DBusConnection) c).getRemoteObject(Systemd1.BUS_NAME, Systemd1.OBJECT_PATH, type);
        } catch (DBusException | RuntimeException e) {
            throw new DevicePolicyException("cannot reach systemd's manager on " + address + ": " + e.getMessage(), e);
        }
    }

    /**
     * Calls {@code method} and waits for the reply; a D-Bus error becomes an exception that carries the
     * error name ({@code org.freedesktop.systemd1.UnitExists: Unit ... already exists.}). The error named
     * {@code expected} (NoSuchUnit when removing what is already gone, UnitExists when starting the scope
     * of a job that has one) is returned as the reply instead; null expects none.
     */
    private Message call(String unit, String expected, DBusInterface target, String method, Object... args) throws DevicePolicyException {
        Message reply;
        try {
            DBusAsyncReply<?> async = connection().callMethodAsync(target, method, args);
            reply = async.getCall().getReply(TIMEOUT_MS);
        } catch (DBusExecutionException | IllegalArgumentException e) {
            throw new DevicePolicyException(method + " of unit " + unit + " failed: " + e.getMessage(), e);
        }
        if (reply == null) {
            throw new DevicePolicyException(method + " of unit " + unit + " got no reply within " + TIMEOUT_MS + " ms from " + address);
        }
        if (reply instanceof Error) {
            Error error = (Error) reply;
            String text = errorText(error);
            String message = method + " of unit " + unit + " failed: " + error.getName() + (text.isEmpty() ? "" : ": " + text);
            if (error.getName().equals(expected)) {
                return reply;
            }
            throw new DevicePolicyException(message);
        }
        return reply;
    }

    private static String errorText(Error error) {
        try {
            Object[] params = error.getParameters();
            return params != null && params.length > 0 && params[0] instanceof String ? (String) params[0] : "";
        } catch (DBusException e) {
            return "";
        }
    }

    /** The unit a job's policy was applied on, whether rsmapd created it, and the policy set on it. */
    private record Applied(String unit, boolean transientScope, DevicePolicy policy) {
    }
}
