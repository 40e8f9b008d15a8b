// The Grid Engine jobs on Son of Grid Engine 8.1.9, Debian's gridengine-master, -exec and -client.
package rsmap.gridengine;

class SonOfGridEngineIT extends GridEngineIT {
    @Override
    Release release() {
        return Release.SGE_8_1;
    }
}
