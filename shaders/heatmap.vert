// SPDX-License-Identifier: Apache-2.0
// The #version line is prepended at load time: "330 core" on desktop OpenGL, "300 es" on OpenGL ES.
// A full-screen triangle pair from gl_VertexID; the fragment shader does all the work.
void main()
{
    const vec2 corners[4] = vec2[4](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(-1.0, 1.0), vec2(1.0, 1.0));
    gl_Position = vec4(corners[gl_VertexID], 0.0, 1.0);
}
