// The allocation core's choice among a job's options: which starts now, or which is planned.
package rsmap.place;

import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;

/**
 * PBS's alternatives design: "If any resource request option can be started (based on site-policy and available
 * resources), the highest priority option is started." Options are tried in the {@link Policy}'s order
 * (ties by the user's); the first that can start now starts. If none can, a job asking for resource
 * reservation gets the option with the earliest planned start (ties by order) reserved, tried at now
 * and every later time something is freed. Pure: reads the {@link ClusterView}, changes nothing.
 */
public final class Placement {
    private Placement() {
    }

    /** Start now, else (with {@code reserve}) the earliest planned start, else none. */
    public static Choice choose(ClusterView v, PlacedJob job, Policy policy) {
        Choice now = now(v, job, policy);
        return now.kind() == Choice.Kind.START || !job.reserve() ? now : plan(v, job, policy);
    }

    /** The highest ordered option that can start now, or none (why names each option's reason). */
    public static Choice now(ClusterView v, PlacedJob job, Policy policy) {
        List<Integer> order = policy.order(job.options());
        List<String> notNow = new ArrayList<>();
        long at = v.cluster().now();
        for (int i : order) {
            Option o = job.options().get(i);
            Fit f = Fit.at(o, job, v, at);
            if (f.ok()) {
                return new Choice.Start(i, f.hosts(), o.spec(job.id(), f.hosts(), job.runtime(), job.reserve()),
                        startWhy(job, policy, order, i, f, notNow));
            }
            notNow.add(name(job, i) + ": " + f.why());
        }
        return new Choice.None((job.alternatives() ? "no alternative can start now: " : "cannot start now: ")
                + String.join("; ", notNow));
    }

    /** The option with the earliest planned start (ties by order), or none. */
    public static Choice plan(ClusterView v, PlacedJob job, Policy policy) {
        List<Integer> order = policy.order(job.options());
        long now = v.cluster().now();
        SortedSet<Long> times = v.cluster().changesAfter(now);
        times.add(now);
        Choice.Planned best = null;
        for (int i : order) {
            Option o = job.options().get(i);
            for (long t : times) {
                if (best != null && t >= best.start()) {
                    break; // only an earlier start beats an option ahead in order
                }
                Fit f = Fit.at(o, job, v, t);
                if (f.ok()) {
                    String why = (job.alternatives() ? "no alternative can start now; " + name(job, i)
                            + " has the earliest planned start" : "cannot start now; planned")
                            + (f.why().isEmpty() ? "" : " (" + f.why() + ")");
                    best = new Choice.Planned(t, i, f.hosts(), o.spec(job.id(), f.hosts(), job.runtime(),
                            job.reserve()), why);
                    break;
                }
            }
        }
        return best != null ? best : new Choice.None("no option can be planned: none fits even when every running"
                + " job has ended");
    }

    private static String startWhy(PlacedJob job, Policy policy, List<Integer> order, int i, Fit f,
                                   List<String> notNow) {
        StringBuilder b = new StringBuilder();
        if (job.alternatives()) {
            b.append(name(job, i)).append(notNow.isEmpty() ? " is first" : " is the first").append(" in order ")
                    .append(order);
            if (policy.kind() != Policy.Kind.USER) {
                b.append(" (policy ").append(policy).append(')');
            }
            b.append(notNow.isEmpty() ? " and can start now" : " that can start now");
        } else {
            b.append("placed");
        }
        if (!f.why().isEmpty()) {
            b.append(" (").append(f.why()).append(')');
        }
        if (!notNow.isEmpty()) {
            b.append("; ").append(String.join("; ", notNow));
        }
        return b.toString();
    }

    private static String name(PlacedJob job, int i) {
        return job.alternatives() ? "alternative " + i : "the job";
    }
}
