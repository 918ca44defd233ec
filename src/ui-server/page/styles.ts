/**
 * The board page's stylesheet. Narrow screens get one column of sections
 * (a phone's width never hides a column off-screen); `prefers-color-scheme:
 * dark` swaps the palette through custom properties.
 */
export const PAGE_CSS = `
:root { --bg: #f4f4f6; --fg: #1d1d22; --muted: #4a4a55; --card: #fff; --bar: #23263a; --bar-fg: #fff;
  --bad: #a0101a; --accent: #1f4fbf; --out-bg: #111; --out-fg: #cfc; --line: #0002; color-scheme: light dark; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15161c; --fg: #e6e6ec; --muted: #b4b4c0; --card: #22242e; --bar: #0c0d12; --bar-fg: #e6e6ec;
    --bad: #ff8a8a; --accent: #9db8ff; --out-bg: #050506; --out-fg: #b8f0b8; --line: #0008; }
}
* { box-sizing: border-box; }
body { font: 14px system-ui, sans-serif; margin: 0; background: var(--bg); color: var(--fg); }
a { color: var(--accent); }
header { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: center; padding: .6rem 1rem; background: var(--bar); color: var(--bar-fg); }
header .brand { color: var(--bar-fg); font-weight: 700; text-decoration: none; }
header .status { margin-left: auto; font-size: 12px; }
header form { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; }
header input { min-width: 8rem; }
.argv { font: 11px ui-monospace, monospace; flex-basis: 100%; }
.argv.bad { color: #ffb3b3; }
.filters { display: flex; flex-wrap: wrap; gap: .4rem; padding: .6rem .8rem 0; }
main { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: .8rem; padding: .8rem; }
@media (max-width: 760px) { main { grid-template-columns: minmax(0, 1fr); } }
section h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .05em; margin: 0 0 .5rem; }
section h2 .count { font-weight: 400; color: var(--muted); }
.card { background: var(--card); border-radius: 6px; padding: .5rem .6rem; margin-bottom: .5rem; box-shadow: 0 1px 2px var(--line); }
.card:focus { outline: 2px solid var(--accent); }
.card .title { font-weight: 600; display: block; color: var(--fg); }
.card .user { font-size: 12px; color: var(--muted); }
.card .meta { font-size: 12px; color: var(--muted); margin-top: .2rem; }
.card pre, .job pre { background: var(--out-bg); color: var(--out-fg); font-size: 11px; padding: .3rem; max-height: 8rem; overflow: auto; margin: .3rem 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.card .why { color: var(--bad); font-size: 12px; margin-top: .2rem; }
.card button { margin-top: .3rem; margin-right: .3rem; }
.pages { display: flex; align-items: center; justify-content: space-between; gap: .5rem; }
.pages .range { font-size: .85rem; }
.errors { list-style: none; margin: 0; padding: .4rem .8rem; }
.errors li { display: flex; gap: .6rem; align-items: center; background: var(--card); color: var(--bad); border-left: 4px solid var(--bad); padding: .3rem .6rem; margin-bottom: .3rem; }
.errors button { margin-left: auto; }
.job { padding: .8rem 1rem; max-width: 70rem; }
.job pre { max-height: 40rem; }
.job table { border-collapse: collapse; width: 100%; }
.job th, .job td { text-align: left; padding: .2rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
.scroll { overflow-x: auto; }
.job dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .2rem 1rem; }
.job dd { margin: 0; overflow-wrap: anywhere; font-family: ui-monospace, monospace; }
.dashboard { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: .8rem; padding: .8rem .8rem 0; }
.dashboard figure { margin: 0; background: var(--card); border-radius: 6px; padding: .4rem; min-width: 0; overflow: hidden; }
.dashboard figcaption { font-size: 12px; color: var(--muted); }
.dashboard .chart-summary { font-size: 11px; color: var(--muted); margin: .2rem 0 0; }
.stale { color: var(--bad); font-size: 12px; margin: 0; grid-column: 1 / -1; }
.nodes { padding: .8rem .8rem 0; }
.nodes table { border-collapse: collapse; width: 100%; background: var(--card); font-size: 12px; }
.nodes th, .nodes td { text-align: left; padding: .2rem .5rem; border-bottom: 1px solid var(--line); }
.nodes .mono { font-family: ui-monospace, monospace; }
.nodes .num { text-align: right; }
.nodes .muted { color: var(--muted); }
.nodes .verdict.dead { color: var(--bad); font-weight: 600; }
`;
