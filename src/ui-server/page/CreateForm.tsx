/// <reference lib="dom" />
/**
 * The user's create form. The command line is split as a shell splits words
 * (src/client/parseCommand.ts) and the argv it will run is shown as it is
 * typed; a line that needs a shell says so and cannot be sent.
 *
 * Each draft carries a submission key (docs/board-protocol.md, "Submitting
 * again safely"): a double click, or a second click after an answer that
 * never came, sends the same request with the same key and makes one task.
 * Any edit, or a task made, starts a new draft with a new key.
 *
 * A time limit may be chosen (docs/board-protocol.md, "Time limits"): a run
 * that holds its runner longer is failed as timed_out and stopped.
 */
import { useState } from 'preact/hooks';
import type { CreateTaskInput } from '../../board/boardPort.js';
import { formatTimeLimit } from '../../board/formatTimeLimit.js';
import { parseCommandLine } from '../../client/parseCommand.js';

/** The limits the form offers, in ms; '' is none. */
const TIME_LIMITS = [600_000, 1_800_000, 3_600_000, 21_600_000, 86_400_000];

function Field(props: {
  name: string;
  placeholder: string;
  value: string;
  set: (v: string) => void;
}) {
  return (
    <input
      name={props.name}
      aria-label={props.name}
      placeholder={props.placeholder}
      required
      value={props.value}
      onInput={(e) => props.set(e.currentTarget.value)}
    />
  );
}

/** A fresh draft's key: 128 random bits (getRandomValues works where randomUUID does not, on plain http). */
function draftKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `form-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export function CreateForm(props: { onCreate: (input: CreateTaskInput) => Promise<unknown> }) {
  const [title, setTitleOnly] = useState('');
  const [image, setImageOnly] = useState('alpine:3');
  const [line, setLineOnly] = useState('echo hello');
  const [limit, setLimitOnly] = useState('');
  const [key, setKey] = useState(draftKey);
  const edit = (set: (v: string) => void) => (v: string) => {
    set(v);
    setKey(draftKey());
  };
  const [setTitle, setImage, setLine, setLimit] = [
    edit(setTitleOnly),
    edit(setImageOnly),
    edit(setLineOnly),
    edit(setLimitOnly),
  ];
  const parsed = parseCommandLine(line);
  return (
    <form
      id="create"
      aria-label="new task"
      onSubmit={(e) => {
        e.preventDefault();
        if (!parsed.ok) return;
        const timeLimit = limit === '' ? {} : { timeLimitMs: Number(limit) };
        void props.onCreate({ title, image, command: parsed.argv, key, ...timeLimit }).then(
          () => setTitle(''),
          () => undefined,
        );
      }}
    >
      <Field name="title" placeholder="new task title" value={title} set={setTitle} />
      <Field name="image" placeholder="image" value={image} set={setImage} />
      <input
        name="command"
        aria-label="command line"
        placeholder="command"
        required
        value={line}
        aria-invalid={!parsed.ok}
        aria-describedby="argv"
        onInput={(e) => setLine(e.currentTarget.value)}
      />
      <select
        name="time limit"
        aria-label="time limit"
        value={limit}
        onChange={(e) => setLimit(e.currentTarget.value)}
      >
        <option value="">no time limit</option>
        {TIME_LIMITS.map((ms) => (
          <option key={ms} value={String(ms)}>
            {`limit ${formatTimeLimit(ms)}`}
          </option>
        ))}
      </select>
      <button type="submit" disabled={!parsed.ok}>
        create
      </button>
      <output id="argv" class={parsed.ok ? 'argv' : 'argv bad'} aria-live="polite">
        {parsed.ok ? `argv: ${JSON.stringify(parsed.argv)}` : parsed.message}
      </output>
    </form>
  );
}
