// What an operation caused besides its own answer: a waiting job started, or a waiting realloc answered.
package rsmap.realloc;

import rsmap.alloc.Decision;

/** One consequence of an operation, in the order they happened. */
public sealed interface Event permits Event.Start, Event.Reply {
    enum Kind { START, REPLY }

    Kind kind();

    /** A waiting job started. */
    record Start(Decision.Started started) implements Event {
        @Override
        public Kind kind() {
            return Kind.START;
        }
    }

    /** A waiting realloc was answered (SUCCESS, DENY, CANCEL or UNSUPPORTED). */
    record Reply(Answer answer) implements Event {
        @Override
        public Kind kind() {
            return Kind.REPLY;
        }
    }
}
