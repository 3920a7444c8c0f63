// SPDX-License-Identifier: Apache-2.0
// The #version line (and precision statements on OpenGL ES) are prepended at load time.
//
// Pass 1, once per frame (new data, layout, marks or focus), not per paint: one fragment per layout cell. Looks up
// the cell's GPU through the layout texture and gathers what the other passes need into one texel, so that a paint
// (an animation step, a hover) reads one or a few texels per pixel instead of five per GPU:
//   r: the current value (float bits), g: the value to morph from (the previous frame's, or the current one where
//   either is missing), b: flags, 0..1 the kind (0 gap, 1 GPU without a value, 2 GPU with one), 4 marked,
//   8 out of focus, 16 in the shared domain highlighted.

uniform highp isampler2D uLayout;   // R32I, layout cells: dense GPU index, -1 for gaps
uniform highp sampler2D uData;      // R32F, values in dense order, uDataWidth per texture row
uniform highp sampler2D uPrevious;  // R32F, the previous frame's values, same shape
uniform highp usampler2D uHealth;   // R8UI, health bytes in dense order, same shape as uData
uniform highp usampler2D uMarks;    // R8UI, bit 1: outlined (a job's blast radius), bit 2: in the domain highlighted
uniform int uDataWidth;
uniform int uHasData;
uniform int uHasPrevious;
uniform int uHasMarks;
uniform int uFocusFirst;      // GPUs [uFocusFirst, uFocusFirst + uFocusCount) are in focus, the others dimmed
uniform int uFocusCount;      // 0: everything in focus

out uvec4 resolved;

void main()
{
    ivec2 cell = ivec2(gl_FragCoord.xy);
    int gpu = texelFetch(uLayout, cell, 0).r;
    if (gpu < 0) {
        resolved = uvec4(0u);
        return;
    }
    ivec2 texel = ivec2(gpu % uDataWidth, gpu / uDataWidth);
    uint flags = 0u;
    if (uHasMarks == 1) {
        uint marks = texelFetch(uMarks, texel, 0).r;
        flags |= (marks & 1u) != 0u ? 4u : 0u;
        flags |= (marks & 2u) != 0u ? 16u : 0u;
    }
    if (uFocusCount > 0 && (gpu < uFocusFirst || gpu >= uFocusFirst + uFocusCount)) {
        flags |= 8u;
    }
    float value = texelFetch(uData, texel, 0).r;
    float previous = value;
    if (uHasPrevious == 1) {
        float p = texelFetch(uPrevious, texel, 0).r;
        if (!isnan(p) && !isnan(value)) {
            previous = p;
        }
    }
    uint state = texelFetch(uHealth, texel, 0).r & 7u;
    bool hasValue = uHasData == 1 && !isnan(value) && state != 3u && state != 4u;
    flags |= hasValue ? 2u : 1u;
    resolved = uvec4(floatBitsToUint(hasValue ? value : 0.0), floatBitsToUint(hasValue ? previous : 0.0), flags, 0u);
}
