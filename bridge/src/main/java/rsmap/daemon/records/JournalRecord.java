// The journal's own records, versioned: what a grant's life leaves on disk, independent of the JSON that
// QUERY and the event stream show.
package rsmap.daemon.records;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.daemon.config.Names;
import rsmap.daemon.state.Args;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobGroups;
import rsmap.daemon.state.JobId;
import rsmap.daemon.state.Taint;

/**
 * One line of the journal. Version {@value #VERSION} is what release 0.1.0 wrote, which had no {@code v}
 * field; records now carry {@code "v":1} and a record of a later version is refused rather than guessed
 * at (a newer release's journal read by an older one). Every field is checked when read: a record whose
 * checksum holds but whose content does not make sense stops the daemon (see {@code Recovery}).
 *
 * <pre>
 * {"v":1,"op":"config","generation":2,"complex_values":"...","global_complex_values":"..."}
 * {"v":1,"op":"start","job":"7","user":"alice","request":"gpu=2","slots":1,"grant":{"node01":{"gpu":["0","0"]}},
 *  "pids":{"4711":"2026-12-02T17:15:22.130Z"}}
 * {"v":1,"op":"enter","job":"7","pid":4711,"pid_start":"2026-12-02T17:15:22.130Z"}
 * {"v":1,"op":"change","job":"7","why":"realloc","alloc_id":4,"grant":{"node01":{"gpu":["0","1"]}},
 *  "releasing":{"node01":{"gpu":["2"]}}}
 * {"v":1,"op":"alloc_ids","up_to":1024}
 * {"v":1,"op":"end","job":"7","why":"epilog"}
 * {"v":1,"op":"key","job":"7","keys":{"gpu":"1"},"hosts":["node01","node02"]}
 * {"v":1,"op":"start","job":"8","user":"bob","request":"mig=1[profile=1g.10gb]","slots":1,
 *  "grant":{"node01":{"mig":["0:1g.10gb@6"]}},"slices":{"0:1g.10gb@6":"MIG-4d1c..."}}
 * </pre>
 * A {@code change} records what a job holds after a realloc's SUCCESS ({@code why} realloc,
 * with its {@code alloc_id}) or a RELEASE ({@code why} release): {@code grant} it may use, {@code
 * releasing} taken away and not given back yet. A {@code start} written by compaction carries {@code
 * releasing} too, and the configuration record the last {@code alloc_id} handed out. A {@code start} or
 * {@code change} of a job holding places of the map of slices (MIG) on this host names each place's slice by
 * its MIG UUID in {@code slices}, "" where none was made (grant and releasing alike; absent when it holds no
 * place, and in the records of earlier builds, which did not write it): what start-up trusts to adopt a slice
 * again when mig.json was lost (docs/gpus.md, "Crash safety"). A build that does not know the field ignores it.
 * <p>
 * An authority stamps every record with the epoch of its lease ({@code Lease}): {@code {"v":1,"epoch":3,
 * "op":...}}. A record without one (a host's, or an authority's before leases) is of epoch 0, so old
 * journals read as before; on replay a record of an older epoch after one of a newer epoch was written by
 * an authority that had lost its lease, and is refused ({@code Recovery}).
 */
public sealed interface JournalRecord {
    int VERSION = 1;
    ObjectMapper JSON = new ObjectMapper();

    /** The record's line (without the journal's checksum and length). */
    String line();

    /** A configuration generation took effect. */
    record Configured(long generation, String complexValues, String globalComplexValues, long allocId)
            implements JournalRecord {
        @Override
        public String line() {
            ObjectNode r = head("config").put("generation", generation).put("complex_values", complexValues)
                    .put("global_complex_values", globalComplexValues);
            if (allocId > 0) {
                r.put("alloc_id", allocId);
            }
            return r.toString();
        }
    }

    /** A job was granted (or, after compaction, holds) this grant; the processes it entered so far. */
    record Started(JobId job, String user, String request, int slots, Grant grant, Grant releasing, Grant remote,
                   Map<Long, Instant> pids, Map<String, String> slices) implements JournalRecord {
        public Started {
            pids = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(pids));
            slices = JournalFields.copy(slices);
        }

        /** {@code slices}: the MIG UUID of each slice the job holds here, by its place ({@code MigNames#slices}). */
        public static Started of(Job j, Map<String, String> slices) {
            return new Started(j.id(), j.user(), j.request(), j.slots(), j.grant(), j.releasing(), j.remote(), j.pids(),
                    slices);
        }

        /** The start of a job whose global part is being asked of the authority ({@link #PENDING}). */
        public static Started pending(Job j, Map<String, String> slices) {
            return new Started(j.id(), j.user(), j.request(), j.slots(), j.grant(), j.releasing(), PENDING, j.pids(),
                    slices);
        }

        /** Written straight, not through a tree: every job start writes one ({@code JsonTextTest}). */
        @Override
        public String line() {
            JsonText r = new JsonText().put("v", VERSION).put("op", "start").put("job", job.toString()).put("user", user)
                    .put("request", request).put("slots", slots).put("grant", grant);
            if (!releasing.isEmpty()) {
                r.put("releasing", releasing);
            }
            if (!remote.isEmpty()) {
                r.put("remote", remote);
            }
            if (!pids.isEmpty()) {
                r.open("pids");
                pids.forEach((pid, start) -> r.put(Long.toString(pid), start.toString()));
                r.close();
            }
            if (!slices.isEmpty()) {
                r.put("slices", slices);
            }
            return r.text();
        }
    }

    /** A process entered a job holding a grant. */
    record Entered(JobId job, long pid, Optional<Instant> start) implements JournalRecord {
        @Override
        public String line() {
            return head("enter").put("job", job.toString()).put("pid", pid).put("pid_start", start.map(Instant::toString)
                    .orElse(null)).toString();
        }
    }

    /** What a job holds changed: a realloc's SUCCESS or a RELEASE. */
    record Changed(JobId job, String why, long allocId, Grant grant, Grant releasing, Map<String, String> slices)
            implements JournalRecord {
        public Changed {
            slices = JournalFields.copy(slices);
        }

        @Override
        public String line() {
            ObjectNode r = head("change").put("job", job.toString()).put("why", why);
            if (allocId > 0) {
                r.put("alloc_id", allocId);
            }
            JournalFields.put(r, "grant", grant);
            JournalFields.put(r, "releasing", releasing);
            JournalFields.putSlices(r, slices);
            return r.toString();
        }
    }

    /**
     * Alloc ids up to {@code upTo} may be handed out: written before an answer whose id is above the last
     * such record (in blocks, one forced write per {@value Reallocation#ID_BLOCK} answers), so that a
     * restart never hands out an id a client has seen, DENY and CANCEL answers included (RFC 51: unique).
     */
    record AllocIds(long upTo) implements JournalRecord {
        @Override
        public String line() {
            return head("alloc_ids").put("up_to", upTo).toString();
        }
    }

    /**
     * An admin's, a site check's or a failed MIG creation's taint of an instance set ({@code tainted}) or
     * cleared (docs/health.md):
     * {@code {"v":1,"op":"health","map":"gpu","id":"0","source":"admin","reason":"fan","since":"...","tainted":true}}.
     * NVML's taints are not written: the card says them again after a restart.
     */
    public record Health(Taint taint, boolean tainted) implements JournalRecord {
        @Override
        public String line() {
            return head("health").put("map", taint.map()).put("id", taint.id()).put("source", taint.source().text())
                    .put("reason", taint.reason()).put("since", taint.since().toString()).put("tainted", tainted)
                    .toString();
        }

        static Health read(JsonNode r) throws IOException {
            java.util.Optional<Taint.Source> source = Taint.Source.of(r.path("source").asText(""));
            if (!r.path("map").isTextual() || !r.path("id").isTextual() || source.isEmpty()
                    || !r.path("tainted").isBoolean() || !r.path("reason").isTextual()) {
                throw new IOException("a health record needs map, id, source (admin, check or mig), reason and tainted");
            }
            Instant since;
            try {
                since = Instant.parse(r.path("since").asText(""));
            } catch (java.time.format.DateTimeParseException e) {
                throw new IOException("a health record's since is an ISO-8601 instant");
            }
            return new Health(new Taint(r.path("map").asText(), r.path("id").asText(), source.get(),
                    r.path("reason").asText(), since), r.path("tainted").asBoolean());
        }
    }

    /**
     * The global part the authority granted a job, written after the job's start record without
     * being forced before the answer: the authority holds it durably, and a host that lost it asks the
     * authority at its next connect ({@link #PENDING}).
     */
    record Remote(JobId job, Grant remote) implements JournalRecord {
        @Override
        public String line() {
            ObjectNode r = head("remote").put("job", job.toString());
            JournalFields.put(r, "remote", remote);
            return r.toString();
        }
    }

    /**
     * The remote grant of a start record whose global part was being asked of the authority when it was
     * forced: the host learns it (or that there is none) from the authority at the next connect.
     */
    Grant PENDING = new Grant(Map.of("pending", Map.of()));

    /**
     * On an authority: the groups a job's scope=job requests are held to on every host of it, and the
     * hosts that were told them (docs/cluster.md, "One group for the whole job"); no hosts: forgotten.
     * The job is named as its hosts name it (no host part): one job, several hosts.
     */
    record Keyed(JobId job, rsmap.alloc.GroupKeys keys, List<String> hosts) implements JournalRecord {
        public Keyed {
            hosts = List.copyOf(hosts);
        }

        /** The key record of {@code job} holding {@code held}. */
        public static Keyed of(JobId job, JobGroups.Held held) {
            return new Keyed(job, held.keys(), List.copyOf(held.hosts()));
        }

        @Override
        public String line() {
            ObjectNode r = head("key").put("job", job.toString());
            ObjectNode k = r.putObject("keys");
            keys.byMap().forEach(k::put);
            hosts.forEach(r.putArray("hosts")::add);
            return r.toString();
        }
    }

    /** A job's grant was freed: by its epilog, or by reconciliation. */
    record Ended(JobId job, String why) implements JournalRecord {
        @Override
        public String line() {
            return head("end").put("job", job.toString()).put("why", why).toString();
        }
    }

    /** {@code line} with the epoch after the version; unchanged for epoch 0. */
    static String stamped(String line, long epoch) {
        String head = "{\"v\":" + VERSION + ",";
        if (epoch == 0 || !line.startsWith(head)) {
            return line;
        }
        return head + "\"epoch\":" + epoch + "," + line.substring(head.length());
    }

    /** The epoch a record was stamped with: 0 when it has none; an IOException when it is not a whole number. */
    static long epoch(String line) throws IOException {
        return epoch(tree(line));
    }

    /** The same of a record already read ({@link #tree}). */
    static long epoch(JsonNode r) throws IOException {
        if (r == null || !r.has("epoch")) {
            return 0;
        }
        if (!r.path("epoch").isIntegralNumber() || !r.path("epoch").canConvertToLong() || r.path("epoch").asLong() < 0) {
            throw new IOException("\"epoch\" is a whole number of at least 0");
        }
        return r.path("epoch").asLong();
    }

    private static ObjectNode head(String op) {
        return JSON.createObjectNode().put("v", VERSION).put("op", op);
    }

    /** A journal line as JSON (null for an empty one), read once for both {@link #epoch} and {@link #parse}. */
    static JsonNode tree(String line) throws IOException {
        try {
            return JSON.readTree(line);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException("not JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** Reads one record; an IOException says what does not make sense in it. */
    static JournalRecord parse(String line) throws IOException {
        return parse(tree(line));
    }

    /** The same of a record already read ({@link #tree}). */
    static JournalRecord parse(JsonNode r) throws IOException {
        if (r == null || !r.isObject() || !r.path("op").isTextual()) {
            throw new IOException("not a record of rsmapd (no \"op\")");
        }
        int v = r.has("v") ? r.path("v").asInt(-1) : 1; // release 0.1.0 wrote no version: version 1
        if (v != VERSION) {
            throw new IOException("record version " + Args.quote(r.path("v").asText()) + ": this rsmapd reads version "
                    + VERSION + " (written by a newer release?)");
        }
        String op = r.path("op").asText();
        String text = r.path("job").asText("");
        if (op.equals("alloc_ids")) {
            if (!r.path("up_to").isIntegralNumber() || !r.path("up_to").canConvertToLong() || r.path("up_to").asLong() < 1) {
                throw new IOException("an alloc_ids record needs up_to, a whole number of at least 1");
            }
            return new AllocIds(r.path("up_to").asLong());
        }
        if (op.equals("health")) {
            return Health.read(r);
        }
        JobId job = op.equals("config") ? null : JobId.parse(text).orElseThrow(() -> new IOException(
                "\"job\" is missing or not a job id: " + Args.quote(text)));
        switch (op) {
            case "config":
                if (!r.path("complex_values").isTextual() || !r.path("global_complex_values").isTextual()
                        || !r.path("generation").canConvertToLong() || r.path("generation").asLong() < 1) {
                    throw new IOException("a configuration record needs complex_values, global_complex_values and a "
                            + "generation of at least 1");
                }
                return new Configured(r.path("generation").asLong(), r.path("complex_values").asText(),
                        r.path("global_complex_values").asText(), JournalFields.allocId(r));
            case "start":
                if (!r.path("request").isTextual() || !r.path("grant").isObject() || !r.path("slots").canConvertToInt()
                        || r.path("slots").asInt() < 1) {
                    throw new IOException("a grant record needs request, slots and grant");
                }
                Map<Long, Instant> pids = new LinkedHashMap<>();
                for (var it = r.path("pids").fields(); it.hasNext();) {
                    var e = it.next();
                    try {
                        pids.put(Long.parseLong(e.getKey()), Instant.parse(e.getValue().asText()));
                    } catch (NumberFormatException | java.time.format.DateTimeParseException x) {
                        throw new IOException("pids: " + Args.quote(e.getKey()) + " is not a pid with its start time (an"
                                + " ISO-8601 instant)");
                    }
                }
                return new Started(job, r.path("user").asText(""), r.path("request").asText(), r.path("slots").asInt(),
                        JournalFields.grant(r.path("grant")),
                        r.has("releasing") ? JournalFields.grant(r.path("releasing")) : Grant.NONE,
                        r.has("remote") ? JournalFields.grant(r.path("remote")) : Grant.NONE, pids,
                        JournalFields.slices(r));
            case "change":
                if (!r.path("grant").isObject() || !r.path("releasing").isObject()
                        || !List.of("realloc", "release").contains(r.path("why").asText())) {
                    throw new IOException("a change record needs why (realloc or release), grant and releasing");
                }
                return new Changed(job, r.path("why").asText(), JournalFields.allocId(r),
                        JournalFields.grant(r.path("grant")), JournalFields.grant(r.path("releasing")),
                        JournalFields.slices(r));
            case "enter":
                try {
                    return new Entered(job, r.path("pid").asLong(), r.hasNonNull("pid_start")
                            ? Optional.of(Instant.parse(r.path("pid_start").asText())) : Optional.empty());
                } catch (java.time.format.DateTimeParseException x) {
                    throw new IOException("an enter record's pid_start is an ISO-8601 instant");
                }
            case "remote":
                if (!r.path("remote").isObject()) {
                    throw new IOException("a remote record needs remote, the job's grant of the global maps");
                }
                return new Remote(job, JournalFields.grant(r.path("remote")));
            case "end":
                return new Ended(job, r.path("why").asText(""));
            case "key":
                return keyed(job, r);
            default:
                throw new IOException("unknown record kind " + Args.quote(op));
        }
    }

    private static Keyed keyed(JobId job, JsonNode r) throws IOException {
        if (!r.path("keys").isObject() || !r.path("hosts").isArray()) {
            throw new IOException("a key record needs keys (map -> group key) and hosts");
        }
        Map<String, String> keys = new LinkedHashMap<>();
        for (var it = r.path("keys").fields(); it.hasNext();) {
            var e = it.next();
            if (!e.getValue().isTextual() || e.getValue().asText().isEmpty() || e.getKey().isEmpty()) {
                throw new IOException("a key record's keys are map names with a group key each");
            }
            keys.put(e.getKey(), e.getValue().asText());
        }
        List<String> hosts = new ArrayList<>();
        for (JsonNode h : r.path("hosts")) {
            if (!h.isTextual() || !Names.host(h.asText())) {
                throw new IOException("a key record's hosts are host names, not " + Args.quote(h.toString()));
            }
            hosts.add(h.asText());
        }
        return new Keyed(job, new rsmap.alloc.GroupKeys(keys), hosts);
    }


}
