/**
 * The model: the types every stage of the player shares, and nothing else. Each stage depends on
 * the model, never on a stage above it, so data flows one way:
 *
 *   pose (viewport) → rank → plan (player) → request → transport → FEC → decode → render
 *
 * - `vectors.ts` — `Vec3`, `Quat`: one definition of a point and a rotation.
 * - `scene.ts`   — the scene an MPD describes: objects, placement, quality ladders.
 * - `pose.ts`    — head poses, where they come from, and the viewport model the planner asks.
 * - `modes.ts`   — the delivery modes, listed once.
 * - `frames.ts`  — decoded frames: reconstructed points, or pictures + atlas for the GPU.
 * - `decoder.ts` — the segment decoder interface the playout loop calls.
 * - `qoe.ts`     — the QoE log's record types (`holoquic-qoe/1`).
 * - `qoeTotals.ts` — running totals of QoE records: the summary's sums, exact over a bounded log.
 *
 * Import from the file that defines a thing (this index only maps the room).
 */
export {};
