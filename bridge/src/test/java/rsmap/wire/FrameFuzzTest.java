// Jazzer fuzz test of the frame decoder: any bytes, fed in any pieces, give frames or FrameException,
// never another exception; every frame decoded re-encodes to bytes that decode to it again.
package rsmap.wire;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

class FrameFuzzTest {
    @FuzzTest
    void decode_anyBytesInAnyPieces_framesOrFrameException(FuzzedDataProvider data) throws FrameException {
        FrameDecoder d = new FrameDecoder(data.consumeInt(Frame.HEADER, 4096));
        List<Frame> frames = new ArrayList<>();
        while (data.remainingBytes() > 0) {
            byte[] piece = data.consumeBytes(data.consumeInt(1, 64));
            d.feed(piece, 0, piece.length);
            try {
                for (Optional<Frame> f = d.next(); f.isPresent(); f = d.next()) {
                    frames.add(f.get());
                }
            } catch (FrameException e) {
                assertThat(e.getMessage()).isNotBlank().doesNotContain("\n");
                if (e.fatal()) {
                    return;
                }
            }
        }
        for (Frame f : frames) {
            assertThat(FrameDecoderTest.decodeAll(f.encode())).containsExactly(f);
        }
    }
}
