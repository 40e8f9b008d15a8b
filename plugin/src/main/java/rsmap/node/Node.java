// A host as filters see it: its name, its slot capacity and its attributes.
package rsmap.node;

import java.util.Objects;
import java.util.OptionalInt;

/** {@code slots} empty: no slot limit ("a host without slots has no slot limit"). */
public record Node(String name, OptionalInt slots, NodeAttributes attributes) {
    public Node {
        Objects.requireNonNull(name);
        Objects.requireNonNull(attributes);
        if (slots.isPresent() && slots.getAsInt() < 0) {
            throw new IllegalArgumentException("slots must be 0 or more");
        }
    }

    /** A host with attributes and no slot limit. */
    public static Node of(String name, NodeAttributes attributes) {
        return new Node(name, OptionalInt.empty(), attributes);
    }
}
