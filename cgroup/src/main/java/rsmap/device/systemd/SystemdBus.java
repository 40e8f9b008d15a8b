// The D-Bus connection to systemd's manager: calls that wait for their reply and keep the D-Bus error name.
package rsmap.device.systemd;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
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
import rsmap.device.DevicePolicyException;

/**
 * One connection, made on first use and again after it dropped. Every D-Bus failure becomes a
 * {@link DevicePolicyException} naming the unit and the D-Bus error name, which dbus-java's proxies would
 * lose (they map an error name to a Java class of that name and fall back to a nameless exception), so
 * calls go through {@link #call} and read the reply message instead.
 */
final class SystemdBus implements AutoCloseable {
    /** systemd's own default method timeout. */
    static final long TIMEOUT_MS = 25_000;

    private final String address;
    private final boolean direct;
    /** Guarded by this; null until first use and after a failed connection. */
    private AbstractConnection connection;
    private Systemd1 manager;

    /**
     * @param address a D-Bus address: the system bus, a test bus, or systemd's private socket
     * @param direct  whether {@code address} is systemd's own socket (no bus names, no Hello)
     */
    SystemdBus(String address, boolean direct) {
        this.address = Objects.requireNonNull(address);
        this.direct = direct;
    }

    String address() {
        return address;
    }

    /** Asks the manager for its version, a cheap read that any systemd answers. */
    void ping() throws DevicePolicyException {
        call(Systemd1.BUS_NAME, null, remote(Properties.class), "Get", Systemd1.INTERFACE, "Version");
    }

    /** {@link #call} on the manager object (the methods of {@link Systemd1}). */
    Message manager(String unit, String expected, String method, Object... args) throws DevicePolicyException {
        return call(unit, expected, manager(), method, args);
    }

    @Override
    public synchronized void close() {
        if (connection != null) {
            connection.disconnect();
            connection = null;
            manager = null;
        }
    }

    /** The first value of a reply, null when it has none. */
    static Object firstParameter(Message m) {
        try {
            Object[] p = m.getParameters();
            return p != null && p.length > 0 ? p[0] : null;
        } catch (DBusException e) {
            return null;
        }
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
    private Message call(String unit, String expected, DBusInterface target, String method, Object... args)
            throws DevicePolicyException {
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
}
