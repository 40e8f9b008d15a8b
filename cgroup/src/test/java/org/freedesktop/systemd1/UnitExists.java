// systemd's "unit exists" error, for the stand-in: dbus-java sends an exception's class name as the
// D-Bus error name, so the class must carry systemd's exact name.
package org.freedesktop.systemd1;

import org.freedesktop.dbus.exceptions.DBusExecutionException;

/** org.freedesktop.systemd1.UnitExists, as systemd answers StartTransientUnit for a unit already loaded. */
public final class UnitExists extends DBusExecutionException {
    private static final long serialVersionUID = 1L;

    public UnitExists(String message) {
        super(message);
    }
}
