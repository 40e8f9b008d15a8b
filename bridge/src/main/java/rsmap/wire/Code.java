// The codes of the agent protocol's commands and events (docs/protocol.md lists them).
package rsmap.wire;

import java.util.Optional;

/** Commands a client sends (0x0001-0x7fff) and events rsmapd answers (0x8000-0xffff). */
public enum Code {
    INIT(0x0001), MODEL_DEF(0x0002), START_EVENTS(0x0003), STOP_EVENTS(0x0004), LIST_FILTERS(0x0005),
    SET_FILTERS(0x0006), QUIT(0x0007), JOB_START(0x0010), JOB_END(0x0011), QUERY(0x0012), RELOAD(0x0013),
    JOB_ENTER(0x0014), REALLOC(0x0015), RELEASE(0x0016), REALLOC_CANCEL(0x0017), REGISTER(0x0018), HOST_EVENT(0x0019),
    RECONCILE(0x001a), PLACE(0x001b), JOB_KEY(0x001c), DRAIN(0x001d), UNDRAIN(0x001e),
    OK(0x8000), ERROR(0x8001), ATTR_DEF(0x8002), FILTERS(0x8003), STATE(0x8004), DIFF(0x8005),
    LAUNCH_DEF(0x8006), ELEMENT_DEF(0x8007), ALLOC(0x8008);

    private final int value;

    Code(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

    public boolean isCommand() {
        return value < 0x8000;
    }

    public static Optional<Code> of(int value) {
        for (Code c : values()) {
            if (c.value == value) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }
}
