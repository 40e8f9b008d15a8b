// A job's identity as every command, the journal and the hooks' arguments name it: the job, its array
// task if any, and on an authority the host that asks for it; one parse, one canonical text.
package rsmap.daemon;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import rsmap.wire.Category;
import rsmap.wire.Session;

/**
 * Canonical text {@code [HOST:]JOB[.TASK]} (docs/protocol.md, the journal's {@code "job"}): {@code 7},
 * {@code 7.3} for task 3 of array job 7, {@code node01:7.3} as an authority holds a host's job. On the
 * wire the parts travel apart ({@code "host"}, {@code "job"}, {@code "task"}; a task {@code "undefined"}
 * is execd's word for none). {@code host} and {@code task} are empty when absent.
 */
record JobId(String host, String job, String task) {
    /** execd's job number or a scheduler's job name: letters, digits, {@code _+-}. */
    private static final Pattern JOB = Pattern.compile("[A-Za-z0-9_+-]{1,100}");
    private static final Pattern TASK = Pattern.compile("[0-9]{1,10}");
    private static final Pattern TEXT = Pattern.compile("(?:(" + Config.HOST.pattern() + "):)?(" + JOB.pattern()
            + ")(?:\\.(" + TASK.pattern() + "))?");

    JobId {
        if (!JOB.matcher(job).matches() || !(task.isEmpty() || TASK.matcher(task).matches())
                || !(host.isEmpty() || Config.HOST.matcher(host).matches())) {
            throw new IllegalArgumentException("not a job id: host " + host + ", job " + job + ", task " + task);
        }
    }

    /** The canonical text read back; empty when {@code text} is not one. */
    static Optional<JobId> parse(String text) {
        Matcher m = TEXT.matcher(text);
        if (!m.matches()) {
            return Optional.empty();
        }
        return Optional.of(new JobId(m.group(1) == null ? "" : m.group(1), m.group(2),
                m.group(3) == null ? "" : m.group(3)));
    }

    /** The canonical text read back; {@code what} names it in the error. */
    static JobId parse(String text, String what) throws Session.CommandException {
        return parse(text).orElseThrow(() -> new Session.CommandException(Category.MALFORMED, what + " is not a job id: "
                + Args.quote(text)));
    }

    /**
     * A command's {@code "job"} and {@code "task"}, and {@code "host"} when it carries one: one error line
     * for each that is missing or of the wrong form.
     */
    static JobId of(Args a) throws Session.CommandException {
        String host = a.string("host", "");
        if (a.has("host") && !Config.HOST.matcher(host).matches()) {
            throw new Session.CommandException(Category.MALFORMED, "\"host\" is a host name, not " + Args.quote(host));
        }
        String job = a.string("job", "");
        if (!JOB.matcher(job).matches()) {
            throw new Session.CommandException(Category.MALFORMED, "\"job\" is missing or not a job id: " + Args.quote(job));
        }
        String task = a.string("task", "");
        if (!task.isEmpty() && !task.equals("undefined") && !TASK.matcher(task).matches()) {
            throw new Session.CommandException(Category.MALFORMED, "\"task\" is a task number or \"undefined\", not " + Args.quote(task));
        }
        return new JobId(host, job, task.equals("undefined") ? "" : task);
    }

    /** How a role reads the job a command names: {@link #of}, or on an authority {@link #ofHost}. */
    interface Reader {
        JobId read(Args a) throws Session.CommandException;
    }

    /** On an authority, a host's job: {@code "host"} is required. */
    static JobId ofHost(Args a) throws Session.CommandException {
        if (!a.has("host")) {
            throw new Session.CommandException(Category.MALFORMED, "an authority grants jobs of hosts: name the job's \"host\"");
        }
        return of(a);
    }

    /** The same job as host {@code h} names it to its authority. */
    JobId onHost(String h) {
        return new JobId(h, job, task);
    }

    /** The same job without its host: as the host itself names it. */
    JobId local() {
        return new JobId("", job, task);
    }

    /** The whole array job (the job itself when it is no task). */
    JobId withoutTask() {
        return new JobId(host, job, "");
    }

    /** Its directory under execd's {@code active_jobs}: {@code JOB.TASK}, a job without tasks as task 1. */
    String spoolDir() {
        return job + "." + (task.isEmpty() ? "1" : task);
    }

    /** {@code "job"} and {@code "task"} (when it has one) into a command's argument. */
    ObjectNode fields(ObjectNode arg) {
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
