// The rsmap simulate contract of the allocation core: JSON Lines in and out, exit 0 unless the script is unreadable.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.cli.MainTest.COMPLEXES;
import static rsmap.cli.MainTest.EXAMPLES;
import static rsmap.cli.MainTest.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimulateTest {
    @TempDir
    Path tmp;

    @Test
    void simulate_exampleScript_answersEveryOperationInOrder() throws IOException {
        MainTest.Run r = run("simulate", "--complexes", COMPLEXES, EXAMPLES.resolve("simulate.jsonl").toString());
        assertThat(r.code()).isZero();
        assertThat(r.err()).isEmpty();
        String[] lines = r.out().split("\n");
        long ops = Files.readAllLines(EXAMPLES.resolve("simulate.jsonl")).stream().filter(l -> !l.isBlank()).count();
        assertThat(lines).hasSize((int) ops + 1); // one start line: "whole" starts when "big" finishes
        assertThat(lines[3]).isEqualTo("{\"op\":\"submit\",\"job\":\"card\",\"result\":\"granted\",\"grants\":"
                + "{\"node01\":{\"gpu\":[\"1\",\"1\",\"1\",\"1\"]},\"global\":{\"lic\":[\"la\"]}}}");
        assertThat(lines[4]).isEqualTo("{\"op\":\"env\",\"job\":\"card\",\"host\":\"node01\",\"env\":"
                + "{\"SGE_HGR_gpu\":\"1 1 1 1\",\"SGE_HGR_lic\":\"la\"}}");
        assertThat(lines[lines.length - 1]).isEqualTo("{\"op\":\"start\",\"job\":\"whole\",\"grants\":"
                + "{\"node01\":{\"gpu\":[\"0\",\"0\",\"0\",\"0\"]}}}");
    }

    @Test
    void simulate_malformedLine_isAnsweredAndTheRunGoesOn() throws IOException {
        Path script = Files.writeString(tmp.resolve("s.jsonl"),
                "{\"op\":\"host\",\"host\":\"n\",\"complex_values\":\"gpu=1\"}\n{oops\n"
                        + "{\"op\":\"submit\",\"job\":\"1\",\"request\":\"gpu=1\",\"hosts\":{\"n\":1}}\n");
        MainTest.Run r = run("simulate", "--complexes", COMPLEXES, script.toString());
        assertThat(r.code()).isZero();
        String[] lines = r.out().split("\n");
        assertThat(lines[1]).startsWith("{\"ok\":false,\"error\":\"line 2: not JSON");
        assertThat(lines[2]).isEqualTo("{\"op\":\"submit\",\"job\":\"1\",\"result\":\"granted\",\"grants\":"
                + "{\"n\":{\"gpu\":[\"0\"]}}}");
    }

    @Test
    void simulate_unreadableScript_exitsTwo() throws IOException {
        MainTest.Run missing = run("simulate", "--complexes", COMPLEXES, tmp.resolve("none").toString());
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).endsWith("none: no such file\n");
        Path bin = Files.write(tmp.resolve("bin"), new byte[] {(byte) 0xc3, (byte) 0x28, '\n'});
        MainTest.Run binary = run("simulate", "--complexes", COMPLEXES, bin.toString());
        assertThat(binary.code()).isEqualTo(2);
        assertThat(binary.err()).endsWith("bin: not UTF-8 text\n");
    }

    @Test
    void simulate_human_explainsInReadableLines() throws IOException {
        Path script = Files.writeString(tmp.resolve("h.jsonl"),
                "{\"op\":\"host\",\"host\":\"n\",\"complex_values\":\"gpu=4(0 0 1 1)\"}\n"
                        + "{\"op\":\"submit\",\"job\":\"1\",\"request\":\"gpu=1\",\"hosts\":{\"n\":1}}\n"
                        + "{\"op\":\"explain\",\"request\":\"gpu=2[same=id,id=0]\",\"host\":\"n\"}\n");
        MainTest.Run r = run("simulate", "--human", "--complexes", COMPLEXES, script.toString());
        assertThat(r.out()).contains("gpu on n: needs 2 agreeing on id\n"
                + "  0            held      by job 1\n"
                + "  0            free\n"
                + "  1            filtered  id=0 does not match\n"
                + "  1            filtered  id=0 does not match\n"
                + "  group 0: 1 free of 2 needed\n"
                + "  group 1: 0 free of 2 needed\n"
                + "  => no group large enough: needs 2 free instances agreeing on id, the largest group (0) has 1\n");
    }
}
