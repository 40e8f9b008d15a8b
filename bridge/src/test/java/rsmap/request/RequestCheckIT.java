// The C check of a request's form (src/main/c/rsmap-request.c, what the Slurm plugin runs at
// submission) held against this module's parser: the same words where it refuses, and never a refusal
// of a resource-map request the parser accepts.
package rsmap.request;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;

class RequestCheckIT {
    static final Path CHECK = Path.of("target", "rsmap-request-check");
    static ComplexTable table;

    @BeforeAll
    static void table() throws Exception {
        assertThat(CHECK).as("built by the Maven build (src/main/c/build.sh)").isExecutable();
        table = ComplexTable.parse(Files.readString(Path.of("..", "examples", "complexes")));
    }

    /** Runs the C check over every request in one process; "ok" or "refused <why>" for each. */
    static List<String> check(List<String> requests) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(CHECK.toAbsolutePath().toString()).redirectErrorStream(true).start();
        List<String> out = new ArrayList<>();
        Thread writer = new Thread(() -> {
            try (Writer w = new java.io.OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8)) {
                for (String r : requests) {
                    w.write(r + "\n");
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        writer.start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null;) {
                out.add(line);
            }
        }
        writer.join();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).hasSameSizeAs(requests);
        return out;
    }

    /** The parser's verdict in the C driver's words. */
    static String java(String request) {
        try {
            RequestList.parse(request, table);
            return "ok";
        } catch (ParseException e) {
            return "refused " + e.getMessage();
        }
    }

    /** request | what the C check says ("ok": left to rsmapd at job start, which may still refuse). */
    static final String[][] ROWS = {
        // refused at submission, in the parser's own words
        {"", "refused column 1: empty request"},
        {"   ", "refused column 4: empty request"},
        {"gpu=1[scope=job]", "refused column 7: scope= needs same="},
        {"gpu=1[scope=host]", "refused column 7: scope= needs same="},
        {"gpu=2[same=id,scope=cluster]", "refused column 21: scope= takes host or job, not 'cluster'"},
        {"gpu=1[bind=x]", "refused column 7: bind= is reserved and has no meaning yet"},
        {"gpu=1[distinct=id]", "refused column 7: distinct= is reserved for a constraint which is not implemented"},
        {"gpu=1[same=id,same=id]", "refused column 15: parameter 'same' is given twice"},
        {"gpu=1,gpu=2", "refused column 7: 'gpu' is requested twice"},
        {"gpu=1,", "refused column 7: expected a request after ','"},
        {"gpu=1[", "refused column 6: '[' without a matching ']'"},
        {"gpu=1[same=id", "refused column 6: '[' without a matching ']'"},
        {"gpu=1[]", "refused column 6: empty parameter list"},
        {"gpu=1[=id]", "refused column 7: expected a parameter name, found '='"},
        {"gpu=1[same]", "refused column 11: expected '=' after parameter 'same'"},
        {"gpu=1[same=]", "refused column 12: expected a value for parameter 'same'"},
        {"gpu=1[scope=j b]", "refused column 14: whitespace inside the value of parameter 'scope'"},
        {"=1", "refused column 1: expected a complex name, found '='"},
        {"gpu", "refused column 4: expected '=' after 'gpu'"},
        // accepted, or left to rsmapd (its table, its expression parser)
        {"gpu=2[same=id]", "ok"},
        {" gpu = 2 [ same = id , scope = job ] , nic=1", "ok"},
        {"gpu=1[id=(gpu0|gpu1)&!x]", "ok"},
        {"gpu=1[model=A100]", "ok"},
        {"gpu=1[same=numa_node,scope=job]", "ok"},
        {"gpus=1", "ok"},
        {"gpu=x", "ok"},
        {"gpu=0", "ok"},
        {"gpu=1234567890", "ok"},
        {"gpu=1[memory=40G,memory=80G]", "ok"},
        {"gpu=1[id=a\\,b]", "ok"},
        {"gpu=1[scope=job]\u00a0", "ok"},
    };

    @Test
    void check_tableOfRequests_refusesWhatTheParserRefusesInItsWords() throws Exception {
        List<String> in = new ArrayList<>();
        for (String[] row : ROWS) {
            in.add(row[0]);
        }
        List<String> c = check(in);
        for (int i = 0; i < ROWS.length; i++) {
            String request = ROWS[i][0];
            assertThat(c.get(i)).as("C check of '%s'", request).isEqualTo(ROWS[i][1]);
            if (c.get(i).startsWith("refused")) {
                assertThat(java(request)).as("parser on '%s'", request).isEqualTo(c.get(i));
            }
        }
    }

    private static final String[] TOKENS = {"gpu", "nic", "lic", "fpga", "model", "numa_node", "memory", "same",
        "scope", "id", "job", "host", "bind", "distinct", "=", "=", "1", "2", "0", "12", "[", "]", "[", "]", ",", ",",
        " ", " ", "\t", "(", ")", "|", "&", "!", "*", "A100", "40G", "gpu0", "\\", "x"};

    /** Seeded random requests near the grammar: the C check never refuses a resource-map request the parser takes. */
    @Test
    void check_randomRequests_neverRefusesAResourceMapRequestTheParserAccepts() throws Exception {
        long seed = Long.getLong("rsmap.seed", 20260707L);
        Random rnd = new Random(seed);
        List<String> in = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            StringBuilder b = new StringBuilder(new String[] {"gpu=", "nic=", "lic=", "gpu=2[", "gpu=1[same=id,"}[rnd.nextInt(5)]);
            for (int n = rnd.nextInt(12); n > 0; n--) {
                b.append(TOKENS[rnd.nextInt(TOKENS.length)]);
            }
            in.add(b.toString());
        }
        List<String> c = check(in);
        int refusedBoth = 0;
        for (int i = 0; i < in.size(); i++) {
            if (!c.get(i).startsWith("refused")) {
                continue;
            }
            String request = in.get(i);
            try {
                RequestList list = RequestList.parse(request, table);
                if (list.requests().stream().allMatch(r -> r instanceof ResourceRequest)) {
                    fail("seed " + seed + ": the C check refused '" + request + "' (" + c.get(i)
                            + ") which the parser accepts");
                }
            } catch (ParseException e) {
                refusedBoth++;
            }
        }
        assertThat(refusedBoth).as("the generator reaches refusals").isGreaterThan(1000);
    }
}
