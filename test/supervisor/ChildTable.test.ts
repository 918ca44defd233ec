import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { setup } from 'xstate';
import { ChildTable } from '../../src/supervisor/ChildTable.js';
import { validateChildSpec } from '../../src/supervisor/childSpec.js';

const logic = setup({}).createMachine({});
const nested = { supervisor: { children: [] } };

// Ids are unique while present (the supervisor checks before adding), but an
// id can come back after its removal: it then goes to the end, as a new start.
test.prop([
  fc.array(fc.tuple(fc.constantFrom('add', 'remove'), fc.constantFrom('a', 'b', 'c', 'd', 'e')), {
    maxLength: 40,
  }),
])('keeps start order across adds and removals, as a plain list would', (steps) => {
  const table = new ChildTable();
  const model: { id: string; supervisor: boolean }[] = [];
  for (const [kind, id] of steps) {
    const at = model.findIndex((m) => m.id === id);
    if (kind === 'add' && at < 0) {
      const supervisor = id === 'e';
      table.add(validateChildSpec({ id, start: supervisor ? nested : { logic } }), undefined);
      model.push({ id, supervisor });
    } else if (kind === 'remove') {
      table.remove(id);
      if (at >= 0) model.splice(at, 1);
    }
    const ids = model.map((m) => m.id);
    expect(table.ids()).toEqual(ids);
    expect(table.reversedIds()).toEqual([...ids].reverse());
    expect(table.whichChildren((n) => n).map((c) => [c.id, c.type])).toEqual(
      model.map((m) => [m.id, m.supervisor ? 'supervisor' : 'worker']),
    );
    const supervisors = model.filter((m) => m.supervisor).length;
    expect(table.countChildren()).toEqual({
      specs: model.length,
      active: 0,
      supervisors,
      workers: model.length - supervisors,
    });
  }
});
