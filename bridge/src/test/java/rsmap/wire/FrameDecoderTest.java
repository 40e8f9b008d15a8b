// The agent protocol's framing (the PTP proxy protocol "Wire protocol for a command"): exact bytes, streams
// split at every byte, the next frame after a bad one, and the mandatory maximum length.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FrameDecoderTest {
    private static final long SEED = Long.getLong("rsmap.seed", 4L);

    /** frame | its exact bytes. */
    static Stream<Arguments> golden() {
        return Stream.of(
                // "MESSAGE_LENGTH is length of the message in bytes (excluding the MESSAGE_LENGTH item)"
                Arguments.of(Frame.of(1, 0x0001), "0000000c000000010001"),
                Arguments.of(Frame.of(7, 0x0001, "1"), "00000010000000070001 1:1"),
                Arguments.of(Frame.of(0xabcdef01L, 0xffff, "", "hello world"), "0000001dabcdef01ffff 0: b:hello world"),
                Arguments.of(Frame.of(2, 0x0101, "{\"job\":\"7\"}"), "0000001a000000020101 b:{\"job\":\"7\"}"),
                Arguments.of(Frame.of(3, 0x10, "ü"), "00000011000000030010 2:\\xc3\\xbc"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("golden")
    void encode_frame_givesTheExactBytes_andDecodesBack(Frame frame, String bytes) throws FrameException {
        assertThat(frame.toString()).isEqualTo(bytes);
        assertThat(decodeAll(frame.encode())).containsExactly(frame);
    }

    @Test
    void decode_streamSplitAtEveryByte_yieldsTheSameFrames() throws FrameException {
        List<Frame> frames = List.of(Frame.of(1, 1, "a b", ""), Frame.of(2, 0x20, "{\"x\":[1,2]}"), Frame.of(3, 2));
        byte[] stream = concat(frames);
        for (int cut = 0; cut <= stream.length; cut++) {
            FrameDecoder d = new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME);
            List<Frame> got = new ArrayList<>();
            d.feed(stream, 0, cut);
            drain(d, got);
            d.feed(stream, cut, stream.length - cut);
            drain(d, got);
            assertThat(got).as("cut at %d", cut).isEqualTo(frames);
            assertThat(d.buffered()).isZero();
        }
    }

    @Test
    void decode_byteByByte_asksForMoreUntilComplete() throws FrameException {
        byte[] one = Frame.of(9, 3, "xyz").encode();
        FrameDecoder d = new FrameDecoder(64);
        for (int i = 0; i < one.length - 1; i++) {
            d.feed(one, i, 1);
            assertThat(d.next()).isEmpty();
        }
        d.feed(one, one.length - 1, 1);
        assertThat(d.next()).contains(Frame.of(9, 3, "xyz"));
    }

    /** bad frame (well delimited) | problem: the next frame still decodes. */
    static Stream<Arguments> recoverable() {
        return Stream.of(
                Arguments.of("0000000c0000000x0001", "TID is not 8 hex digits"),
                Arguments.of("0000000c00000007000g", "CODE is not 4 hex digits"),
                Arguments.of("0000000e000000070001 x", "has no HEXLEN: prefix"),
                Arguments.of("0000000f000000070001x1:", "does not start with a space"),
                Arguments.of("00000010000000070001 5:a", "longer than its frame"),
                Arguments.of("00000010000000070001 z:a", "bad length 'z'"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("recoverable")
    void decode_badFrame_isAnErrorAndTheNextFrameStillDecodes(String bad, String problem) throws FrameException {
        FrameDecoder d = new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME);
        byte[] b = bad.getBytes(StandardCharsets.ISO_8859_1);
        d.feed(b, 0, b.length);
        byte[] good = Frame.of(8, 1, "ok").encode();
        d.feed(good, 0, good.length);
        FrameException e = catchThrowableOfType(FrameException.class, d::next);
        assertThat(e).isNotNull();
        assertThat(e.getMessage()).contains(problem);
        assertThat(e.fatal()).isFalse();
        assertThat(d.next()).contains(Frame.of(8, 1, "ok"));
    }

    @Test
    void decode_badCode_keepsTheTidForTheErrorEvent() {
        FrameDecoder d = new FrameDecoder(64);
        byte[] b = "0000000c0000002a00zz".getBytes(StandardCharsets.US_ASCII);
        d.feed(b, 0, b.length);
        assertThat(catchThrowableOfType(FrameException.class, d::next).tid()).isEqualTo(42);
    }

    /** stream that cannot be delimited | problem: fatal, the connection closes. */
    static Stream<Arguments> fatal() {
        return Stream.of(
                Arguments.of("0000zz0c000000010001", "LENGTH is not 8 hex digits"),
                Arguments.of("00100001000000010001", "larger than the maximum 1048576"),
                Arguments.of("00000004000000010001", "shorter than its TID and CODE"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fatal")
    void decode_undelimitableStream_isFatal(String bad, String problem) {
        FrameDecoder d = new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME);
        byte[] b = bad.getBytes(StandardCharsets.US_ASCII);
        d.feed(b, 0, b.length);
        FrameException e = catchThrowableOfType(FrameException.class, d::next);
        assertThat(e.fatal()).isTrue();
        assertThat(e.getMessage()).contains(problem);
        assertThat(catchThrowableOfType(FrameException.class, d::next).fatal()).isTrue();
    }

    @Test
    void decode_oversizedLength_isRefusedBeforeBuffering() throws FrameException {
        FrameDecoder d = new FrameDecoder(100);
        byte[] b = "7fffffff".getBytes(StandardCharsets.US_ASCII);
        d.feed(b, 0, b.length);
        assertThat(catchThrowableOfType(FrameException.class, d::next).getMessage()).contains("larger than the maximum 100");
    }

    @Test
    void encodeDecode_randomFrames_roundTrip() throws FrameException {
        Random rnd = new Random(SEED);
        for (int run = 0; run < 2000; run++) {
            List<byte[]> args = new ArrayList<>();
            for (int a = rnd.nextInt(5); a > 0; a--) {
                byte[] bytes = new byte[rnd.nextInt(300)];
                rnd.nextBytes(bytes);
                args.add(bytes);
            }
            Frame f = new Frame(rnd.nextLong() & 0xffffffffL, rnd.nextInt(0x10000), args);
            assertThat(decodeAll(f.encode())).as("seed %d run %d", SEED, run).containsExactly(f);
        }
    }

    /** 53 connections declaring 1 MiB frames must not cost 53 MiB before the bytes come. */
    @Test
    void memory_followsTheBytesThatArrived_notTheDeclaredLength_andIsGivenBackAfterTheFrame() throws FrameException {
        Chunks pool = new Chunks(1000);
        FrameDecoder d = new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME, pool);
        assertThat(d.capacity()).as("an idle connection holds nothing").isZero();
        byte[] big = Frame.of(1, 2, "y".repeat(FrameDecoder.DEFAULT_MAX_FRAME - 40)).encode();
        d.feed(big, 0, 30);
        assertThat(d.next()).isEmpty();
        assertThat(d.capacity()).isEqualTo(Chunks.SIZE);
        for (int at = 30; at < big.length; at += 65536) {
            d.feed(java.nio.ByteBuffer.wrap(big, at, Math.min(65536, big.length - at)));
            assertThat(d.capacity()).isLessThan(d.buffered() + Chunks.SIZE);
        }
        assertThat(d.next()).isPresent();
        assertThat(d.capacity()).as("given back").isZero();
        assertThat(pool.free()).isEqualTo((big.length + Chunks.SIZE - 1) / Chunks.SIZE);
        // The next frame takes its chunk from the pool; what was never needed is dropped at the next trim.
        pool.trim();
        d.feed(Frame.of(2, 3).encode(), 0, 20);
        assertThat(d.next()).contains(Frame.of(2, 3));
        pool.trim();
        assertThat(pool.free()).as("one chunk was needed since the last trim").isEqualTo(1);
    }

    static List<Frame> decodeAll(byte[] bytes) throws FrameException {
        FrameDecoder d = new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME);
        d.feed(bytes, 0, bytes.length);
        List<Frame> out = new ArrayList<>();
        drain(d, out);
        return out;
    }

    static void drain(FrameDecoder d, List<Frame> out) throws FrameException {
        for (Optional<Frame> f = d.next(); f.isPresent(); f = d.next()) {
            out.add(f.get());
        }
    }

    static byte[] concat(List<Frame> frames) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        frames.forEach(f -> b.writeBytes(f.encode()));
        return b.toByteArray();
    }
}
