// systemd's "no such unit" error, for the stand-in: dbus-java sends an exception's class name as the
// D-Bus error name, so the class must carry systemd's exact name.
package org.freedesktop.systemd1;

import org.freedesktop.dbus.exceptions.DBusExecutionException;

/** org.freedesktop.systemd1.NoSuchUnit, as systemd answers StopUnit for a unit that is gone. */
public final class NoSuchUnit extends DBusExecutionException {
    private static final long serialVersionUID = 1L;

    public NoSuchUnit(String message) {
        super(message);
    }
}
