// One entry of a -l request list: a resource map request, or an ordinary complex request.
package rsmap.request;

import rsmap.complex.Complex;

/** An entry of a request list, {@code gpu=4[same=id]} or {@code arch=lx-amd64}. */
public sealed interface Request permits ResourceRequest, PlainRequest {
    Complex complex();

    default String name() {
        return complex().name();
    }
}
