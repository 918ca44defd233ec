/// <reference lib="dom" />
/** Errors from the page's requests: each stays until dismissed. */

/** One error shown. */
export interface ShownError {
  id: number;
  message: string;
}

export function ErrorList(props: { errors: ShownError[]; onDismiss: (id: number) => void }) {
  if (props.errors.length === 0) return null;
  return (
    <ul class="errors" role="alert">
      {props.errors.map((e) => (
        <li key={e.id}>
          <span>{e.message}</span>
          <button type="button" aria-label="dismiss" onClick={() => props.onDismiss(e.id)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
