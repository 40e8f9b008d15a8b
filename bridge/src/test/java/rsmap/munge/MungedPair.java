// Test support: a test class's two munged, each with a fresh key - the one its credentials come from, and
// another (a foreign cluster's) - started before the class's own @BeforeAll, stopped after its @AfterAll.
package rsmap.munge;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** Registered as a static field ({@code @RegisterExtension}). */
final class MungedPair implements BeforeAllCallback, AfterAllCallback {
    /** Whether the tests encode as another uid: root and setpriv needed too. */
    private final boolean asRoot;
    // Set in beforeAll, for the class's life.
    private MungeD munged;
    private MungeD other;

    MungedPair(boolean asRoot) {
        this.asRoot = asRoot;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        MungeD.requirePrerequisites(asRoot);
        munged = MungeD.start();
        other = MungeD.start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (other != null) {
            other.close();
        }
        if (munged != null) {
            munged.close();
        }
    }

    /** The munged whose key the tests' credentials are of. */
    MungeD munged() {
        return munged;
    }

    /** The one with another key. */
    MungeD other() {
        return other;
    }
}
