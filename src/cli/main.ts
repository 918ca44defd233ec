/**
 * The `roundtable` command line. Until the runtime lands (issue 7 and 10),
 * `start` says so plainly instead of pretending.
 */
const [command = 'help'] = process.argv.slice(2);

const usage = `roundtable <command>

commands:
  start     run the runtime with the board and inspector (not yet available)
  help      this text
`;

if (command === 'help' || command === '--help') {
  process.stdout.write(usage);
} else if (command === 'start') {
  process.stdout.write(
    'roundtable: the runtime is not built yet; `npm test` runs what exists so far.\n',
  );
} else {
  process.stderr.write(`roundtable: unknown command '${command}'\n\n${usage}`);
  process.exitCode = 2;
}
