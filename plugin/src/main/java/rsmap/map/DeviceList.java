// The value of the devices characteristic: device paths with access modes (Grid Engine's RSMAP manual, DEVICE ISOLATION).
package rsmap.map;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import rsmap.Chars;
import rsmap.ParseException;

/**
 * {@code <path>[:<mode>];<path>[:<mode>];...} with mode r, w or rw; a path without a mode is granted
 * read access. Paths must be absolute, without {@code ..} components; bad values are refused when the
 * host configuration is read, not when a job starts.
 */
public record DeviceList(List<Device> devices) {
    /** The characteristic that carries device files. */
    public static final String CHARACTERISTIC = "devices";

    public DeviceList {
        devices = List.copyOf(devices);
    }

    /** Access to a device file. */
    public enum Mode {
        R("r"), W("w"), RW("rw");

        private final String text;

        Mode(String text) {
            this.text = text;
        }

        /** The wider of two modes: where one path is granted twice, the widest mode applies. */
        public Mode widen(Mode other) {
            return this == other ? this : RW;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** One device path and its mode. */
    public record Device(String path, Mode mode) {
        public Device {
            Objects.requireNonNull(path);
            Objects.requireNonNull(mode);
        }

        @Override
        public String toString() {
            return path + ":" + mode;
        }
    }

    public static DeviceList parse(String text) throws ParseException {
        return parse(text, 0, text.length());
    }

    /** Reads {@code input[start, end)}; errors point into {@code input}. */
    public static DeviceList parse(String input, int start, int end) throws ParseException {
        List<Device> out = new ArrayList<>();
        int from = start;
        while (from <= end) {
            int semi = input.indexOf(';', from);
            int to = semi < 0 || semi > end ? end : semi;
            out.add(device(input, from, to));
            from = to + 1;
        }
        return new DeviceList(out);
    }

    private static Device device(String input, int from, int to) throws ParseException {
        String entry = input.substring(from, to);
        if (entry.isEmpty()) {
            throw new ParseException("empty device path in devices list", input, from);
        }
        int colon = entry.lastIndexOf(':');
        String path = colon < 0 ? entry : entry.substring(0, colon);
        Mode mode = Mode.R;
        if (colon >= 0) {
            String m = entry.substring(colon + 1);
            switch (m) {
                case "r":
                    mode = Mode.R;
                    break;
                case "w":
                    mode = Mode.W;
                    break;
                case "rw":
                    mode = Mode.RW;
                    break;
                default:
                    throw new ParseException("unknown device mode '" + m + "' (r, w or rw)", input, from + colon + 1);
            }
        }
        if (path.isEmpty()) {
            throw new ParseException("empty device path in devices list", input, from);
        }
        for (int i = 0; i < path.length(); i++) {
            if (Character.isISOControl(path.charAt(i)) || Chars.isSpace(path.charAt(i))) {
                throw new ParseException("device path '" + path + "' contains whitespace or a control character", input,
                        from + i);
            }
        }
        if (path.charAt(0) != '/') {
            throw new ParseException("device path '" + path + "' is not absolute", input, from);
        }
        for (String part : path.split("/")) {
            if (part.equals("..")) {
                throw new ParseException("device path '" + path + "' contains '..'", input, from);
            }
        }
        return new Device(path, mode);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (Device d : devices) {
            b.append(b.length() > 0 ? ";" : "").append(d);
        }
        return b.toString();
    }
}
