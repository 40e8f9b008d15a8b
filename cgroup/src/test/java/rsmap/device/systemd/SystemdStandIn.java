// Test support: a stand-in for systemd's manager, exported on a private bus, that records every call.
package rsmap.device.systemd;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.freedesktop.dbus.DBusPath;
import org.freedesktop.dbus.connections.impl.DBusConnection;
import org.freedesktop.dbus.connections.impl.DBusConnectionBuilder;
import org.freedesktop.dbus.errors.InvalidMethodArgument;
import org.freedesktop.dbus.exceptions.DBusException;
import org.freedesktop.dbus.exceptions.DBusExecutionException;
import org.freedesktop.dbus.interfaces.Properties;
import org.freedesktop.dbus.types.UInt32;
import org.freedesktop.dbus.types.Variant;

/**
 * Owns {@code org.freedesktop.systemd1} and exports itself at {@code /org/freedesktop/systemd1}.
 * dbus-java dispatches an incoming call on method name and D-Bus signature, so a call reaches a method
 * here only with the signature of {@link Systemd1} ({@code ssa(sv)a(sa(sv))}, {@code sba(sv)},
 * {@code ss}, {@code ssau}); anything else is answered with UnknownMethod. Each property is recorded with
 * the signature of its variant, so tests see exactly what went over the wire.
 *
 * <p>Like systemd it keeps the transient units started and not stopped: starting one of those again
 * answers {@code org.freedesktop.systemd1.UnitExists}; AttachProcessesToUnit answers NoSuchUnit for a unit
 * it does not know and refuses a unit started without {@code Delegate=true}, with systemd's words.
 */
final class SystemdStandIn implements Systemd1, Properties, AutoCloseable {
    /**
     * One call as received: method, unit name, mode (or runtime flag, or sub-cgroup), properties by name
     * (the last of a name sent twice), and the names in the order sent.
     */
    record Call(String method, String unit, String mode, Map<String, Variant<?>> properties, List<String> order) {
        Call(String method, String unit, String mode, Map<String, Variant<?>> properties) {
            this(method, unit, mode, properties, List.copyOf(properties.keySet()));
        }
    }

    /** Sent as the D-Bus error {@code rsmap.device.systemd.SystemdStandIn.UnitExists}. */
    static final class UnitExists extends DBusExecutionException {
        private static final long serialVersionUID = 1L;

        UnitExists(String message) {
            super(message);
        }
    }

    private final DBusConnection connection;
    private final List<Call> calls = Collections.synchronizedList(new ArrayList<>());
    /** The transient units started and not stopped, and whether each was started delegated. */
    private final Map<String, Boolean> units = new ConcurrentHashMap<>();
    /** The unit each process was put in, as GetUnitByPID answers. */
    private final Map<Long, String> unitOfPid = new ConcurrentHashMap<>();
    /** How many more GetUnitByPID calls answer "in no unit yet", as while systemd's start job runs. */
    private final java.util.concurrent.atomic.AtomicInteger lagging = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();

    /** The next {@code n} GetUnitByPID calls answer NoUnitForPID: the start job has not run yet. */
    void lag(int n) {
        lagging.set(n);
    }

    /** How many GetUnitByPID calls came. */
    int unitByPidCalls() {
        return asked.get();
    }
    private volatile String failWith;
    private volatile boolean gone;
    private volatile boolean record = true;

    SystemdStandIn(String address) throws DBusException {
        connection = DBusConnectionBuilder.forAddress(address).withShared(false).build();
        connection.requestBusName(BUS_NAME);
        connection.exportObject(OBJECT_PATH, this);
    }

    /** Every following call fails with UnitExists and this text; null to succeed again. */
    void failWith(String text) {
        failWith = text;
    }

    /** Every following call fails with systemd's org.freedesktop.systemd1.NoSuchUnit (true) or not. */
    void unitGone(boolean on) {
        gone = on;
    }

    /** Whether calls are kept (off for the timing loop). */
    void record(boolean on) {
        record = on;
    }

    List<Call> calls() {
        synchronized (calls) {
            return List.copyOf(calls);
        }
    }

    void clear() {
        calls.clear();
    }

    /** Back to a fresh systemd: no calls, no units, no failures. */
    void reset() {
        clear();
        units.clear();
        unitOfPid.clear();
        lagging.set(0);
        asked.set(0);
        failWith(null);
        unitGone(false);
    }

    /** Whether a transient unit of that name runs (started, not stopped, not {@link #collect collected}). */
    boolean hasUnit(String name) {
        return units.containsKey(name);
    }

    /** Forgets a unit, as systemd collects a scope whose last process ended. */
    void collect(String name) {
        units.remove(name);
        unitOfPid.values().removeIf(name::equals);
    }

    /** Processes {@code pids} run in unit {@code name}, one execd made (as GetUnitProcesses will list them). */
    void runIn(String name, long... pids) {
        for (long pid : pids) {
            unitOfPid.put(pid, name);
        }
    }

    /** Process {@code pid} exited; its unit is collected with its last process, unless rsmapd started it. */
    void exited(long pid) {
        String unit = unitOfPid.remove(pid);
        if (unit != null && !unitOfPid.containsValue(unit)) {
            units.remove(unit);
        }
    }

    @Override
    public DBusPath StartTransientUnit(String name, String mode, List<UnitProperty> properties, List<AuxUnit> aux) {
        Map<String, Variant<?>> byName = byName(properties);
        received(new Call("StartTransientUnit", name, mode, byName, names(properties)));
        if (!aux.isEmpty()) {
            throw new IllegalStateException("aux units sent: " + aux.size());
        }
        Variant<?> delegate = byName.get("Delegate");
        if (units.putIfAbsent(name, delegate != null && Boolean.TRUE.equals(delegate.getValue())) != null) {
            throw new org.freedesktop.systemd1.UnitExists("Unit " + name + " already exists.");
        }
        Variant<?> pids = byName.get("PIDs");
        if (pids != null) {
            for (Object pid : (List<?>) pids.getValue()) {
                unitOfPid.put(((Number) pid).longValue(), name);
            }
        }
        return new DBusPath("/org/freedesktop/systemd1/job/1");
    }

    @Override
    public void SetUnitProperties(String name, Boolean runtime, List<UnitProperty> properties) {
        received(new Call("SetUnitProperties", name, "runtime=" + runtime, byName(properties), names(properties)));
    }

    @Override
    public void AttachProcessesToUnit(String name, String subcgroup, List<UInt32> pids) {
        received(new Call("AttachProcessesToUnit", name, subcgroup, Map.of("PIDs", new Variant<>(pids, "au"))));
        Boolean delegated = units.get(name);
        if (delegated == null) {
            throw new org.freedesktop.systemd1.NoSuchUnit("Unit " + name + " not loaded.");
        }
        if (!delegated) {
            throw new InvalidMethodArgument("Process migration not available on non-delegated units.");
        }
        pids.forEach(pid -> unitOfPid.put(pid.longValue(), name));
    }

    /** Not recorded among the calls: the backend asks it after each start and join, to see it done. */
    @Override
    public DBusPath GetUnitByPID(UInt32 pid) {
        asked.incrementAndGet();
        String unit = unitOfPid.get(pid.longValue());
        if (unit == null || lagging.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new org.freedesktop.systemd1.NoUnitForPID("PID " + pid + " does not belong to any loaded unit.");
        }
        return new DBusPath(SystemdBackend.unitPath(unit));
    }

    /**
     * The processes of a unit that has any (started by rsmapd, or {@link #runIn} by execd), each with its
     * cgroup and a command; NoSuchUnit otherwise, as for a scope collected with its last process.
     */
    @Override
    public List<UnitProcess> GetUnitProcesses(String name) {
        received(new Call("GetUnitProcesses", name, "", Map.of()));
        List<UnitProcess> out = new ArrayList<>();
        unitOfPid.forEach((pid, unit) -> {
            if (unit.equals(name)) {
                out.add(new UnitProcess("/system.slice/" + name, new UInt32(pid), "sleep 300"));
            }
        });
        if (out.isEmpty() && !units.containsKey(name)) {
            throw new org.freedesktop.systemd1.NoSuchUnit("Unit " + name + " not loaded.");
        }
        return out;
    }

    @Override
    public DBusPath StopUnit(String name, String mode) {
        received(new Call("StopUnit", name, mode, Map.of()));
        units.remove(name);
        return new DBusPath("/org/freedesktop/systemd1/job/2");
    }

    @Override
    @SuppressWarnings("unchecked")
    public <A> A Get(String iface, String property) {
        if (INTERFACE.equals(iface) && "Version".equals(property)) {
            return (A) "252-stand-in";
        }
        throw new DBusExecutionException("no property " + iface + "." + property);
    }

    @Override
    public <A> void Set(String iface, String property, A value) {
        throw new DBusExecutionException("read-only");
    }

    @Override
    public Map<String, Variant<?>> GetAll(String iface) {
        return Map.of("Version", new Variant<>("252-stand-in"));
    }

    @Override
    public String getObjectPath() {
        return OBJECT_PATH;
    }

    @Override
    public void close() {
        connection.disconnect();
    }

    private void received(Call call) {
        if (record) {
            calls.add(call);
        }
        if (gone) {
            throw new org.freedesktop.systemd1.NoSuchUnit("Unit " + call.unit() + " not loaded.");
        }
        String text = failWith;
        if (text != null) {
            throw new UnitExists(text);
        }
    }

    /**
     * Properties by name. A name sent twice is a mistake, but for DeviceAllow after an empty DeviceAllow:
     * the empty list resets the unit's list (systemd.resource-control(5)), then entries are appended.
     */
    private static Map<String, Variant<?>> byName(List<UnitProperty> properties) {
        Map<String, Variant<?>> out = new LinkedHashMap<>();
        for (UnitProperty p : properties) {
            Variant<?> before = out.put(p.getName(), p.getValue());
            if (before != null && !(p.getName().equals("DeviceAllow") && ((List<?>) before.getValue()).isEmpty())) {
                throw new IllegalStateException("property sent twice: " + p.getName());
            }
        }
        return out;
    }

    private static List<String> names(List<UnitProperty> properties) {
        return properties.stream().map(UnitProperty::getName).toList();
    }
}
