// Whether any instance of a host's configurations lists devices (then every job's policy is closed),
// remembered for the very configurations it was looked up in.
package rsmap.daemon.state;

import java.util.Collection;
import java.util.List;
import rsmap.map.ComplexValues;

/**
 * Asked at each JOB_ENTER and each change of a running job's holding; the instances are looked through
 * again only when the configurations differ from the last ones asked about. A configuration is immutable
 * all the way down (records over copied lists, immutable characteristics), so the very same objects give
 * the same answer; any reconfiguration - RELOAD, a new core, a host's maps changed in place - makes new
 * ones. Never a stale "no devices": that would open every job's policy.
 */
final class DevicesListed {
    /** The last answer and the configurations it is the answer for; volatile: both are read as one. */
    private volatile Answer last = new Answer(List.of(), false);

    private record Answer(List<ComplexValues> configurations, boolean listed) {
        /** Whether {@code now} are the very configurations of this answer, in order (identity, not equality). */
        boolean of(Collection<ComplexValues> now) {
            if (now.size() != configurations.size()) {
                return false;
            }
            int i = 0;
            for (ComplexValues v : now) {
                if (v != configurations.get(i++)) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Whether any instance of {@code now} lists devices. */
    boolean in(Collection<ComplexValues> now) {
        Answer a = last;
        if (!a.of(now)) {
            a = new Answer(List.copyOf(now), rsmap.device.DevicePolicy.listsDevices(now));
            last = a;
        }
        return a.listed();
    }
}
