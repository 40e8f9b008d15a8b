// A process of a unit as GetUnitProcesses lists it: the D-Bus struct (sus).
package rsmap.device.systemd;

import java.util.Objects;
import org.freedesktop.dbus.Struct;
import org.freedesktop.dbus.annotations.Position;
import org.freedesktop.dbus.types.UInt32;

/** An {@code (sus)} entry: the process's cgroup path (below the unit's), its PID, and its command line. */
public final class UnitProcess extends Struct {
    @Position(0)
    private final String cgroup;
    @Position(1)
    private final UInt32 pid;
    @Position(2)
    private final String command;

    public UnitProcess(String cgroup, UInt32 pid, String command) {
        this.cgroup = Objects.requireNonNull(cgroup);
        this.pid = Objects.requireNonNull(pid);
        this.command = Objects.requireNonNull(command);
    }

    public String getCgroup() {
        return cgroup;
    }

    public UInt32 getPid() {
        return pid;
    }

    public String getCommand() {
        return command;
    }
}
