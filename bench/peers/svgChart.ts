/**
 * A horizontal bar chart as an SVG string, built by hand so the bench needs
 * no chart library. One bar per row, labelled with its value.
 */

export interface Bar {
  label: string;
  value: number;
  /** Shown instead of a bar when the system was not measured. */
  note?: string;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * @example
 * ```ts
 * barChart('t', 'u', [{ label: 'a', value: 1 }]).startsWith('<svg') // => true
 * ```
 */
export function barChart(title: string, unit: string, bars: readonly Bar[]): string {
  const labelW = 230;
  const barMax = 420;
  const rowH = 34;
  const top = 44;
  const width = labelW + barMax + 120;
  const height = top + bars.length * rowH + 16;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const rows = bars.map((b, i) => {
    const y = top + i * rowH;
    const label = `<text x="${labelW - 10}" y="${y + 21}" text-anchor="end">${esc(b.label)}</text>`;
    if (b.note !== undefined) {
      return `${label}<text x="${labelW}" y="${y + 21}" fill="#777">${esc(b.note)}</text>`;
    }
    const w = Math.max(1, Math.round((b.value / max) * barMax));
    const value = `${Math.round(b.value).toLocaleString('en-US')} ${unit}`;
    return `${label}<rect x="${labelW}" y="${y + 6}" width="${w}" height="${rowH - 12}" fill="#4a7bd0"/><text x="${labelW + w + 6}" y="${y + 21}">${esc(value)}</text>`;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="24" font-size="15" font-weight="bold">${esc(title)}</text>`,
    ...rows,
    '</svg>',
    '',
  ].join('\n');
}
