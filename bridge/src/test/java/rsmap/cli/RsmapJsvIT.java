// The JSV script (bridge/src/main/scripts/rsmap_jsv.sh) driven through its stdin/stdout protocol as qmaster
// or qsub would (sge_jsv(1)), against the built bin/rsmap: one long-lived JSV verifying job after job.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import rsmap.daemon.PlaceAuthority;

class RsmapJsvIT {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path JSV = ROOT.resolve("bridge/src/main/scripts/rsmap_jsv.sh");

    @TempDir
    Path tmp;

    /** The submit side of the dialogue: START, the job's PARAM and ENV lines, BEGIN; QUIT at the end. */
    static final class Dialogue implements AutoCloseable {
        final Process jsv;
        final Writer in;
        final BufferedReader out;

        Dialogue(Path complexes) throws IOException {
            this(complexes, null);
        }

        Dialogue(Path complexes, Path authority) throws IOException {
            this(complexes, authority, ROOT.resolve("bridge/target/rsmap-place"));
        }

        Dialogue(Path complexes, Path authority, Path place) throws IOException {
            ProcessBuilder pb = new ProcessBuilder("sh", JSV.toString());
            if (authority != null) {
                pb.environment().put("RSMAP_AUTHORITY_SOCKET", authority.toString());
            }
            pb.environment().put("RSMAP_PLACE", place.toString());
            pb.environment().put("RSMAP_HOOK", ROOT.resolve("bridge/target/rsmap-hook").toString());
            pb.environment().put("RSMAP_COMPLEXES", complexes.toString());
            jsv = pb.redirectError(ProcessBuilder.Redirect.INHERIT).start();
            in = new OutputStreamWriter(jsv.getOutputStream(), StandardCharsets.UTF_8);
            out = new BufferedReader(new InputStreamReader(jsv.getInputStream(), StandardCharsets.UTF_8));
        }

        void send(String line) throws IOException {
            in.write(line + "\n");
            in.flush();
        }

        /** Verifies one job; returns what the JSV answered after STARTED, up to and including RESULT. */
        List<String> verify(String... job) throws IOException {
            send("START");
            assertThat(out.readLine()).as("the JSV wants the job's environment").isEqualTo("SEND ENV");
            assertThat(out.readLine()).isEqualTo("STARTED");
            for (String line : List.of("PARAM VERSION 1.0", "PARAM CONTEXT master", "PARAM CLIENT qmaster",
                    "PARAM USER alice", "PARAM GROUP staff", "PARAM CMDNAME /home/alice/job.sh", "PARAM CMDARGS 0")) {
                send(line);
            }
            for (String line : job) {
                send(line);
            }
            send("BEGIN");
            List<String> answer = new ArrayList<>();
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                answer.add(line);
                if (line.startsWith("RESULT ")) {
                    break;
                }
            }
            return answer;
        }

        @Override
        public void close() throws Exception {
            send("QUIT");
            assertThat(jsv.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(jsv.exitValue()).isZero();
        }
    }

    /** A job's lines to the JSV, and what it must answer. */
    record Row(String why, List<String> job, List<String> answer) {
    }

    static Row row(String why, List<String> job, String... answer) {
        return new Row(why, job, List.of(answer));
    }

    static final List<Row> ROWS = List.of(
            row("a valid request whose maps and amounts agree with -l is accepted as it is",
                    List.of("PARAM global_l_hard gpu=2,h_vmem=1G", "ENV ADD RSMAP_REQUEST gpu=2[same=id]",
                            "ENV ADD HOME /home/alice"),
                    "RESULT STATE ACCEPT"),
            row("a job without any resource map is none of our business",
                    List.of("PARAM global_l_hard h_vmem=1G", "ENV ADD HOME /home/alice"),
                    "RESULT STATE ACCEPT"),
            row("a malformed request is rejected with the parser's message",
                    List.of("PARAM global_l_hard gpu=1", "ENV ADD RSMAP_REQUEST gpu=1[scope=job]"),
                    "RESULT STATE REJECT rsmap: RSMAP_REQUEST=gpu=1[scope=job]: column 7: scope= needs same="),
            row("an amount that differs from what -l books is rejected",
                    List.of("PARAM global_l_hard gpu=2", "ENV ADD RSMAP_REQUEST gpu=3[same=id]"),
                    "RESULT STATE REJECT rsmap: RSMAP_REQUEST asks for gpu=3 but -l requests gpu=2: the amounts must agree"),
            row("a map the scheduler does not book is rejected",
                    List.of("PARAM global_l_hard h_vmem=1G", "ENV ADD RSMAP_REQUEST gpu=1"),
                    "RESULT STATE REJECT rsmap: RSMAP_REQUEST asks for gpu=1 but -l does not request gpu: add -l gpu=1"),
            row("RSMAP_REQUEST carries resource maps only",
                    List.of("PARAM global_l_hard gpu=1", "ENV ADD RSMAP_REQUEST gpu=1,mem_free=1G"),
                    "RESULT STATE REJECT rsmap: RSMAP_REQUEST holds resource maps only; request mem_free with -l"),
            row("a bracketed -l (seen by a client JSV) becomes a numeric -l plus RSMAP_REQUEST",
                    List.of("PARAM global_l_hard gpu=1[model=a100,memory=64G],nic=1,h_vmem=2G"),
                    "PARAM global_l_hard gpu=1,nic=1,h_vmem=2G",
                    "ENV ADD RSMAP_REQUEST gpu=1[model=a100,memory=64G],nic=1",
                    "RESULT STATE CORRECT"),
            row("the same for the pre-9.0 parameter name l_hard",
                    List.of("PARAM l_hard gpu=2[same=id]"),
                    "PARAM l_hard gpu=2", "ENV ADD RSMAP_REQUEST gpu=2[same=id]", "RESULT STATE CORRECT"),
            row("parameters in both places are ambiguous",
                    List.of("PARAM global_l_hard gpu=2[same=id]", "ENV ADD RSMAP_REQUEST gpu=2[same=id]"),
                    "RESULT STATE REJECT rsmap: give a resource map's parameters either in -l or in RSMAP_REQUEST, not in both"),
            row("a plain -l gpu=2 gets RSMAP_REQUEST too: rsmapd grants every map request",
                    List.of("PARAM global_l_hard gpu=2,h_vmem=1G"),
                    "ENV ADD RSMAP_REQUEST gpu=2", "RESULT STATE CORRECT"),
            row("a map booked with -l but missing from RSMAP_REQUEST joins it",
                    List.of("PARAM global_l_hard gpu=1,nic=2", "ENV ADD RSMAP_REQUEST gpu=1[same=id]"),
                    "ENV MOD RSMAP_REQUEST gpu=1[same=id],nic=2", "RESULT STATE CORRECT"),
            row("a user-set SGE_DEBUG_DEVICES_ALLOW would widen execd's device policy: rejected",
                    List.of("PARAM global_l_hard gpu=1", "ENV ADD RSMAP_REQUEST gpu=1",
                            "ENV ADD SGE_DEBUG_DEVICES_ALLOW /dev/nvidia1 rw"),
                    "RESULT STATE REJECT rsmap: SGE_DEBUG_DEVICES_ALLOW is not accepted: rsmapd alone sets a job's device policy"),
            row("a request cut at a comma by qsub -v gets a hint",
                    List.of("PARAM global_l_hard gpu=1", "ENV ADD RSMAP_REQUEST gpu=1[same=id", "ENV ADD scope job]"),
                    "RESULT STATE REJECT rsmap: RSMAP_REQUEST=gpu=1[same=id: column 6: '[' without a matching ']' "
                            + "(qsub -v cuts a value at commas: export RSMAP_REQUEST and submit with -v RSMAP_REQUEST)"),
            row("maps in the master or slave scope are not supported yet",
                    List.of("PARAM global_l_hard h_vmem=1G", "PARAM master_l_hard gpu=1"),
                    "RESULT STATE REJECT rsmap: request resource maps in the global scope (-scope master/slave is not supported)"),
            row("a map amount that is not a whole number",
                    List.of("PARAM global_l_hard gpu=two"),
                    "RESULT STATE REJECT rsmap: -l gpu=two: the amount of a resource map is a whole number"));

    @Test
    void everyRow_oneJsvForAllJobs_answersAsTheTableSays() throws Exception {
        try (Dialogue d = new Dialogue(ROOT.resolve("examples/complexes"))) {
            for (Row r : ROWS) {
                assertThat(d.verify(r.job().toArray(new String[0]))).as(r.why()).isEqualTo(r.answer());
            }
        }
    }

    @Test
    void shortcuts_areResolvedThroughTheComplexTable() throws Exception {
        Path complexes = tmp.resolve("complexes");
        Files.writeString(complexes, Files.readString(ROOT.resolve("examples/complexes"))
                .replaceFirst("(?m)^gpu +gpu +RSMAP", "gpu g RSMAP"));
        try (Dialogue d = new Dialogue(complexes)) {
            assertThat(d.verify("PARAM global_l_hard g=2", "ENV ADD RSMAP_REQUEST gpu=2[same=id]"))
                    .containsExactly("RESULT STATE ACCEPT");
            assertThat(d.verify("PARAM global_l_hard g=2[same=id]"))
                    .containsExactly("PARAM global_l_hard gpu=2", "ENV ADD RSMAP_REQUEST gpu=2[same=id]", "RESULT STATE CORRECT");
        }
    }

    /**
     * RSMAP_FILTER and RSMAP_ALTERNATIVES, asked of a real authority (in this JVM) to which two
     * hosts registered: node01 (x86_64, 2.4GHz, gpu=2) and node02 (aarch64, 1.8GHz, gpu=1).
     */
    @Test
    void filtersAndAlternatives_askTheAuthority_andBecomeAHostListAndTheChosenRequest() throws Exception {
        try (PlaceAuthority authority = PlaceAuthority.start(tmp.resolve("authority"), "lic=1(la)")) {
            try (Dialogue d = new Dialogue(ROOT.resolve("examples/complexes"), authority.socket())) {
                assertThat(d.verify("PARAM global_l_hard gpu=1", "ENV ADD RSMAP_FILTER cpu_speed > 2GHz"))
                        .as("the hosts that pass become -l h=").containsExactly("PARAM global_l_hard gpu=1,h=node01",
                                "ENV ADD RSMAP_REQUEST gpu=1", "RESULT STATE CORRECT");
                assertThat(d.verify("PARAM global_l_hard h_vmem=1G", "ENV ADD RSMAP_FILTER arch == \"ppc64le\""))
                        .as("no host passes: rejected naming the attribute").containsExactly("RESULT STATE REJECT rsmap: "
                                + "no host passes RSMAP_FILTER=arch == \"ppc64le\": node01: arch=x86_64 does not satisfy "
                                + "arch == \"ppc64le\"");
                assertThat(d.verify("PARAM global_l_hard gpu=1", "ENV ADD RSMAP_FILTER cpu_speed >"))
                        .as("a filter that does not parse: its column").hasSize(1).first().asString()
                        .startsWith("RESULT STATE REJECT rsmap: RSMAP_FILTER=cpu_speed >: filter: column 12");
                assertThat(d.verify("ENV ADD RSMAP_ALTERNATIVES gpu=4 || gpu=2 || gpu=1"))
                        .as("the first that can start: gpu=2 on node01").containsExactly(
                                "ENV ADD RSMAP_ALTERNATIVE 1", "PARAM l_hard gpu=2,h=node01",
                                "ENV ADD RSMAP_REQUEST gpu=2", "RESULT STATE CORRECT");
                assertThat(d.verify("ENV ADD RSMAP_ALTERNATIVES gpu=2 || gpu=1", "ENV ADD RSMAP_FILTER arch == \"aarch64\""))
                        .as("alternatives with a filter").containsExactly("ENV ADD RSMAP_ALTERNATIVE 1",
                                "PARAM l_hard gpu=1,h=node02", "ENV ADD RSMAP_REQUEST gpu=1", "RESULT STATE CORRECT");
                assertThat(d.verify("PARAM global_l_hard gpu=1", "ENV ADD RSMAP_ALTERNATIVES gpu=2 || gpu=1"))
                        .containsExactly("RESULT STATE REJECT rsmap: give either RSMAP_ALTERNATIVES or a resource-map "
                                + "request (-l, RSMAP_REQUEST), not both");
            }
        }
    }

    /**
     * docs/protocol.md, "Error categories": the JSV rejects a job when the authority's ERROR is refused or
     * malformed, and only then - the same words and the same exit code with another category (or none: a
     * usage error of an older rsmap) accept the job with a warning, the host checking the filter at job start.
     */
    @Test
    void theAuthoritysError_isDecidedByItsCategory_neverByItsWordsOrExitCode() throws Exception {
        String[][] rows = {{"refused", "REJECT"}, {"malformed", "REJECT"}, {"denied", "accept"}, {"busy", "accept"},
            {"unavailable", "accept"}, {"internal", "accept"}, {"", "accept"}};
        for (String[] row : rows) {
            Path place = tmp.resolve("rsmap-place-" + (row[0].isEmpty() ? "none" : row[0]));
            Files.writeString(place, String.join("\n", "#!/bin/sh",
                    "echo \"error='rsmapd: filter: column 12: filter ends where a value is expected'\"",
                    row[0].isEmpty() ? "" : "echo \"category='" + row[0] + "'\"",
                    "echo 'error: rsmapd: filter: column 12: filter ends where a value is expected' >&2",
                    "exit 2") + "\n");
            place.toFile().setExecutable(true);
            try (Dialogue d = new Dialogue(ROOT.resolve("examples/complexes"), tmp.resolve("authority.sock"), place)) {
                List<String> answer = d.verify("PARAM global_l_hard gpu=1", "ENV ADD RSMAP_FILTER cpu_speed > 2GHz");
                if (row[1].equals("REJECT")) {
                    assertThat(answer).as(row[0]).containsExactly("RESULT STATE REJECT rsmap: RSMAP_FILTER=cpu_speed > 2GHz: "
                            + "filter: column 12: filter ends where a value is expected");
                } else {
                    assertThat(answer).as(row[0]).anyMatch(l -> l.startsWith("LOG WARNING rsmap JSV: the authority did not"))
                            .noneMatch(l -> l.contains("REJECT"));
                }
            }
        }
    }

    @Test
    void noComplexTable_rejectsForNow_andLogsWhy() throws Exception {
        try (Dialogue d = new Dialogue(tmp.resolve("missing"))) {
            assertThat(d.verify("PARAM global_l_hard gpu=1")).containsExactly(
                    "LOG ERROR rsmap JSV: cannot read the complex table " + tmp.resolve("missing"),
                    "RESULT STATE REJECT_WAIT rsmap: the resource-map check is not configured on this cluster, try again later");
        }
    }
}
