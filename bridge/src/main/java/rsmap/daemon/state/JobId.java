// A job's identity as every command, the journal and the hooks' arguments name it: the job, its array
// task if any, and on an authority the host that asks for it; one parse, one canonical text.
package rsmap.daemon.state;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Optional;
import rsmap.daemon.config.Names;

/**
 * Canonical text {@code [HOST:]JOB[.TASK]} (docs/protocol.md, the journal's {@code "job"}): {@code 7},
 * {@code 7.3} for task 3 of array job 7, {@code node01:7.3} as an authority holds a host's job. On the
 * wire the parts travel apart ({@code "host"}, {@code "job"}, {@code "task"}; a task {@code "undefined"}
 * is execd's word for none). {@code host} and {@code task} are empty when absent.
 */
public record JobId(String host, String job, String task) {
    public JobId {
        if (!Names.job(job) || !(task.isEmpty() || Names.task(task)) || !(host.isEmpty() || Names.host(host))) {
            throw new IllegalArgumentException("not a job id: host " + host + ", job " + job + ", task " + task);
        }
    }

    /**
     * The canonical text read back; empty when {@code text} is not one. A host name holds no {@code :} and a
     * job no {@code .}, so the first of each is where the parts meet.
     */
    public static Optional<JobId> parse(String text) {
        int colon = text.indexOf(':');
        if (colon >= 0 && !Names.host(text.substring(0, colon))) {
            return Optional.empty();
        }
        int from = colon + 1;
        int dot = text.indexOf('.', from);
        int jobEnd = dot < 0 ? text.length() : dot;
        if (!Names.job(text, from, jobEnd) || (dot >= 0 && !Names.task(text, dot + 1, text.length()))) {
            return Optional.empty();
        }
        return Optional.of(new JobId(colon < 0 ? "" : text.substring(0, colon), text.substring(from, jobEnd),
                dot < 0 ? "" : text.substring(dot + 1)));
    }

    /** The canonical text read back; {@code what} names it in the error. */
    public static JobId parse(String text, String what) throws Refusal {
        return parse(text).orElseThrow(() -> Refusal.malformed(what + " is not a job id: "
                + Args.quote(text)));
    }

    /**
     * A command's {@code "job"} and {@code "task"}, and {@code "host"} when it carries one: one error line
     * for each that is missing or of the wrong form.
     */
    public static JobId of(Args a) throws Refusal {
        String host = a.string("host", "");
        if (a.has("host") && !Names.host(host)) {
            throw Refusal.malformed("\"host\" is a host name, not " + Args.quote(host));
        }
        String job = a.string("job", "");
        if (!Names.job(job)) {
            throw Refusal.malformed("\"job\" is missing or not a job id: " + Args.quote(job));
        }
        String task = a.string("task", "");
        if (!task.isEmpty() && !task.equals("undefined") && !Names.task(task)) {
            throw Refusal.malformed("\"task\" is a task number or \"undefined\", not " + Args.quote(task));
        }
        return new JobId(host, job, task.equals("undefined") ? "" : task);
    }

    /** How a role reads the job a command names: {@link #of}, or on an authority {@link #ofHost}. */
    public interface Reader {
        JobId read(Args a) throws Refusal;
    }

    /** On an authority, a host's job: {@code "host"} is required. */
    public static JobId ofHost(Args a) throws Refusal {
        if (!a.has("host")) {
            throw Refusal.malformed("an authority grants jobs of hosts: name the job's \"host\"");
        }
        return of(a);
    }

    /** The same job as host {@code h} names it to its authority. */
    public JobId onHost(String h) {
        return new JobId(h, job, task);
    }

    /** The same job without its host: as the host itself names it. */
    public JobId local() {
        return new JobId("", job, task);
    }

    /** The whole array job (the job itself when it is no task). */
    public JobId withoutTask() {
        return new JobId(host, job, "");
    }

    /** Its directory under execd's {@code active_jobs}: {@code JOB.TASK}, a job without tasks as task 1. */
    public String spoolDir() {
        return job + "." + (task.isEmpty() ? "1" : task);
    }

    /** {@code "job"} and {@code "task"} (when it has one) into a command's argument. */
    public ObjectNode fields(ObjectNode arg) {
        arg.put("job", job);
        if (!task.isEmpty()) {
            arg.put("task", task);
        }
        return arg;
    }

    @Override
    public String toString() {
        return (host.isEmpty() ? "" : host + ":") + job + (task.isEmpty() ? "" : "." + task);
    }
}
