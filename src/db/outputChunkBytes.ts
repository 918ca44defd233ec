/**
 * Bytes of UTF-8 in one stored piece of an output (`session_output_chunks`,
 * migration 26). A page reads whole pieces: smaller ones make a one-line
 * page cheaper, larger ones make fewer rows (512 for a 16 MiB output).
 * Written into the migration's SQL: changing it needs a new migration.
 */
export const OUTPUT_CHUNK_BYTES = 32 * 1024;
