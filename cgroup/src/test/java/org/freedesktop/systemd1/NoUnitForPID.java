// systemd's "no unit for a pid" error, for the stand-in: dbus-java sends an exception's class name as the
// D-Bus error name, so the class must carry systemd's exact name.
package org.freedesktop.systemd1;

import org.freedesktop.dbus.exceptions.DBusExecutionException;

/** org.freedesktop.systemd1.NoUnitForPID, as systemd answers GetUnitByPID for a process in no unit. */
public final class NoUnitForPID extends DBusExecutionException {
    private static final long serialVersionUID = 1L;

    public NoUnitForPID(String message) {
        super(message);
    }
}
