// The six methods of systemd's org.freedesktop.systemd1.Manager D-Bus interface that device isolation uses.
package rsmap.device.systemd;

import java.util.List;
import org.freedesktop.dbus.DBusPath;
import org.freedesktop.dbus.annotations.DBusInterfaceName;
import org.freedesktop.dbus.interfaces.DBusInterface;
import org.freedesktop.dbus.types.UInt32;

/**
 * systemd's manager object at {@code /org/freedesktop/systemd1} (org.freedesktop.systemd1(5)). The Java
 * types fix the D-Bus signatures; dbus-java dispatches on name and signature, so a stand-in implementing
 * this interface only answers calls with exactly these signatures:
 * <pre>
 *   StartTransientUnit(s name, s mode, a(sv) properties, a(sa(sv)) aux) -&gt; o job
 *   SetUnitProperties(s name, b runtime, a(sv) properties)
 *   StopUnit(s name, s mode) -&gt; o job
 *   AttachProcessesToUnit(s name, s subcgroup, au pids)      (systemd 238 and later)
 *   GetUnitByPID(u pid) -&gt; o unit
 *   GetUnitProcesses(s name) -&gt; a(sus) processes            (systemd 238 and later)
 * </pre>
 * Method names are capitalised as on the bus. Parameters are boxed ({@code Boolean}, not {@code boolean}):
 * {@code AbstractConnection.callMethodAsync} finds the method by the classes of the arguments it is
 * given, which are always boxed, and misses a method declared with a primitive.
 */
@DBusInterfaceName(Systemd1.INTERFACE)
public interface Systemd1 extends DBusInterface {
    String INTERFACE = "org.freedesktop.systemd1.Manager";
    String BUS_NAME = "org.freedesktop.systemd1";
    String OBJECT_PATH = "/org/freedesktop/systemd1";

    DBusPath StartTransientUnit(String name, String mode, List<UnitProperty> properties, List<AuxUnit> aux);

    void SetUnitProperties(String name, Boolean runtime, List<UnitProperty> properties);

    DBusPath StopUnit(String name, String mode);

    void AttachProcessesToUnit(String name, String subcgroup, List<UInt32> pids);

    DBusPath GetUnitByPID(UInt32 pid);

    List<UnitProcess> GetUnitProcesses(String name);
}
