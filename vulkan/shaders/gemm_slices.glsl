// gemm_slices.glsl - a product split along K summed back: its `slices`
// partial products, n apart, added in slice order. Shared by
// gemm_epilogue.comp (the backend) and the synthesizer's emitted split
// matmuls (copied into the folder as oi_gemm_slices.glsl), so both add the
// same values in the same order.
//
// The includer defines float gemm_partial(uint at): the partial product
// stored at `at` (slice 0 at e).
#ifndef OI_GEMM_SLICES_GLSL
#define OI_GEMM_SLICES_GLSL

float gemm_slices_sum(uint e, uint n, uint slices) {
    precise float product = gemm_partial(e);
    for (uint s = 1u; s < slices; s++)
        product += gemm_partial(e + s * n);
    return product;
}

#endif
