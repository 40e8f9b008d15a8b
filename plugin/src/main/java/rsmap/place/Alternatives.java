// A waiting job with options, as the queue sees it: asked again at every pass.
package rsmap.place;

import java.util.Optional;
import java.util.function.Function;
import rsmap.alloc.Chooser;
import rsmap.alloc.Cluster;
import rsmap.alloc.JobSpec;

/**
 * Adapts {@link Placement} to the core's {@link Chooser}: the policy is the one in force when the job
 * was submitted; {@code view} gives the hosts' attributes beside the cluster being asked. {@link #last}
 * is the latest start or plan chosen (the answer's "alternative", "hosts" and "why").
 */
public final class Alternatives implements Chooser {
    private final PlacedJob job;
    private final Policy policy;
    private final Function<Cluster, ClusterView> view;
    private Choice last = new Choice.None("not tried yet");

    public Alternatives(PlacedJob job, Policy policy, Function<Cluster, ClusterView> view) {
        this.job = job;
        this.policy = policy;
        this.view = view;
    }

    public PlacedJob job() {
        return job;
    }

    /** The latest choice: Start once the job started, Planned while it holds a reserved start. */
    public Choice last() {
        return last;
    }

    @Override
    public Optional<JobSpec> now(Cluster cluster) {
        Choice c = Placement.now(view.apply(cluster), job, policy);
        last = c;
        return c.kind() == Choice.Kind.START ? Optional.of(((Choice.Start) c).job()) : Optional.empty();
    }

    @Override
    public Optional<Planned> plan(Cluster cluster) {
        Choice c = Placement.plan(view.apply(cluster), job, policy);
        if (c.kind() != Choice.Kind.PLANNED) {
            return Optional.empty();
        }
        last = c;
        Choice.Planned p = (Choice.Planned) c;
        return Optional.of(new Planned(p.start(), p.job()));
    }
}
