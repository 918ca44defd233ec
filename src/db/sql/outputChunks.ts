/**
 * Migration 26: an output's bytes in pieces (`session_output_chunks`), each
 * with the count of newlines before it, so a page of the output reads the
 * few pieces it needs (src/db/outputPages.ts) instead of the whole text.
 * Written when a page of the output is first read, not when it is
 * inserted: the insert rides the tick that finishes the run, under the lock
 * every node's tick waits for, and most outputs are never paged at all.
 */
import { OUTPUT_CHUNK_BYTES } from '../outputChunkBytes.js';

/**
 * Cuts `p_text` into pieces of OUTPUT_CHUNK_BYTES bytes of UTF-8 (a piece
 * may end inside a character: readers join the bytes before decoding),
 * stores them with `lines_before` (newlines before the piece), and answers
 * the text's line count (a final newline ends the last line). The newlines
 * are counted on the escape encoding of the bytes, which leaves a newline
 * byte as it is: Postgres has no `replace` for bytea. Idempotent: a piece
 * already stored stays.
 */
export const RT_OUTPUT_CHUNKS = `CREATE FUNCTION rt_output_chunks(p_session text, p_text text)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_bytes bytea := convert_to(p_text, 'UTF8');
  v_len integer := octet_length(v_bytes);
  v_newlines bigint;
BEGIN
  WITH c AS MATERIALIZED (
    SELECT g.seq, substring(v_bytes FROM g.seq * ${OUTPUT_CHUNK_BYTES} + 1 FOR ${OUTPUT_CHUNK_BYTES}) AS body
    FROM generate_series(0, (v_len - 1) / ${OUTPUT_CHUNK_BYTES}) AS g(seq)
    WHERE v_len > 0
  ), n AS MATERIALIZED (
    SELECT c.seq, c.body, length(e.t) - length(replace(e.t, E'\\n', '')) AS nl
    FROM c CROSS JOIN LATERAL (SELECT encode(c.body, 'escape') AS t OFFSET 0) e
  ), ins AS (
    INSERT INTO session_output_chunks (session_id, seq, lines_before, body)
    SELECT p_session, n.seq, sum(n.nl) OVER (ORDER BY n.seq) - n.nl, n.body FROM n
    ON CONFLICT DO NOTHING
  )
  SELECT coalesce(sum(n.nl), 0) INTO v_newlines FROM n;
  RETURN v_newlines + CASE WHEN v_len > 0 AND get_byte(v_bytes, v_len - 1) <> 10 THEN 1 ELSE 0 END;
END $$`;

/**
 * Indexes one output, once, when a page of it is first read (the only read
 * of its whole text); a row already indexed is left alone, so two first
 * readers at once index it once.
 */
export const RT_INDEX_OUTPUT = `CREATE FUNCTION rt_index_output(p_session text)
RETURNS void LANGUAGE sql AS $$
  UPDATE session_outputs SET line_count = rt_output_chunks(session_id, text),
    text_bytes = octet_length(text)
  WHERE session_id = p_session AND line_count IS NULL
$$`;

/** Deletes the pieces of the outputs a statement deleted (the retention prune, any version). */
export const RT_OUTPUT_CHUNKS_DROP = `CREATE FUNCTION rt_output_chunks_drop() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM session_output_chunks c USING gone g WHERE c.session_id = g.session_id;
  RETURN NULL;
END $$`;

/** Migration 26's statements, in order. */
export const OUTPUT_CHUNKS_SCHEMA: readonly string[] = [
  `CREATE TABLE session_output_chunks (
    session_id text NOT NULL,
    seq integer NOT NULL CHECK (seq >= 0),
    lines_before bigint NOT NULL CHECK (lines_before >= 0),
    body bytea NOT NULL CHECK (octet_length(body) BETWEEN 1 AND ${OUTPUT_CHUNK_BYTES}),
    PRIMARY KEY (session_id, seq)
  )`,
  // The piece holding a line's start: the last with fewer newlines before it.
  'CREATE INDEX session_output_chunks_line_idx ON session_output_chunks (session_id, lines_before, seq)',
  `ALTER TABLE session_outputs ADD COLUMN line_count integer CHECK (line_count >= 0),
    ADD COLUMN text_bytes integer CHECK (text_bytes >= 0)`,
  RT_OUTPUT_CHUNKS,
  RT_INDEX_OUTPUT,
  RT_OUTPUT_CHUNKS_DROP,
  `CREATE TRIGGER session_outputs_drop_chunks AFTER DELETE ON session_outputs
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION rt_output_chunks_drop()`,
];
