/// <reference lib="dom" />
/**
 * A card's last output lines. It follows the tail (scrolled to the newest
 * line) unless the reader scrolled up, and while the reader has text selected
 * inside it, it holds still: new lines wait until the selection is let go,
 * so output can be read and copied while the run goes on.
 */
import { Component, createRef } from 'preact';

interface Props {
  lines: readonly string[];
}

function selectingInside(el: HTMLElement | null): boolean {
  const sel = document.getSelection();
  if (el === null || sel === null || sel.isCollapsed || sel.rangeCount === 0) return false;
  return el.contains(sel.anchorNode) || el.contains(sel.focusNode);
}

export class OutputBox extends Component<Props> {
  private readonly box = createRef<HTMLPreElement>();
  private shown: readonly string[] = this.props.lines;
  private atBottom = true;
  private readonly onSelection = () => {
    if (this.shown !== this.props.lines && !selectingInside(this.box.current)) this.forceUpdate();
  };

  override componentDidMount(): void {
    this.scrollToEnd();
    document.addEventListener('selectionchange', this.onSelection);
  }

  override componentWillUnmount(): void {
    document.removeEventListener('selectionchange', this.onSelection);
  }

  override shouldComponentUpdate(next: Props): boolean {
    if (next.lines === this.shown) return false;
    if (selectingInside(this.box.current)) return false;
    const el = this.box.current;
    // Within a couple of pixels of the end counts as following the tail.
    this.atBottom = el === null || el.scrollTop + el.clientHeight >= el.scrollHeight - 4;
    return true;
  }

  override componentDidUpdate(): void {
    if (this.atBottom) this.scrollToEnd();
  }

  private scrollToEnd(): void {
    const el = this.box.current;
    if (el !== null) el.scrollTop = el.scrollHeight;
  }

  override render() {
    this.shown = this.props.lines;
    return (
      // A scrolled box must be reachable by keyboard to be read without a mouse.
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region is a focus stop (WCAG 2.1.1)
      <pre class="output" ref={this.box} tabIndex={0}>
        {this.shown.join('\n')}
      </pre>
    );
  }
}
