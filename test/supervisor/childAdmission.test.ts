import { describe, expect, it, vi } from 'vitest';
import { ChildTable } from '../../src/supervisor/ChildTable.js';
import {
  admitChildSpec,
  admitInitialChildren,
  admitStartedChild,
} from '../../src/supervisor/childAdmission.js';
import type { ChildSpec, SupervisorSpec } from '../../src/supervisor/childSpec.js';
import {
  AlreadyStartedError,
  ChildSpecError,
  ChildTypeError,
  MaxChildrenError,
} from '../../src/supervisor/errors.js';
import { resolveSupervisorSpec } from '../../src/supervisor/supervisorSpec.js';
import { worker } from './workers.js';

const spec = (id: string, extra: Partial<ChildSpec> = {}): ChildSpec => ({
  id,
  start: { logic: worker },
  ...extra,
});
const sup = (s: Partial<SupervisorSpec> = {}) => resolveSupervisorSpec({ children: [], ...s });
const fieldOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof ChildSpecError ? error.field : error;
  }
  return undefined;
};

describe('admitChildSpec', () => {
  it('takes a significant child only under a supervisor with autoShutdown', () => {
    const significant = spec('a', { restart: 'transient', significant: true });
    expect(fieldOf(() => admitChildSpec(significant, sup()))).toBe('significant');
    expect(admitChildSpec(significant, sup({ autoShutdown: 'any_significant' })).significant).toBe(
      true,
    );
  });

  it('fills in the defaults of a valid spec, and names the bad field of another', () => {
    expect(admitChildSpec(spec('a'), sup())).toMatchObject({ id: 'a', restart: 'permanent' });
    expect(fieldOf(() => admitChildSpec({ id: 'a' }, sup()))).toBe('start');
  });
});

describe('admitInitialChildren', () => {
  it('keeps the start order and refuses an id given twice', () => {
    const ids = admitInitialChildren(sup({ children: [spec('b'), spec('a')] })).map((s) => s.id);
    expect(ids).toEqual(['b', 'a']);
    expect(fieldOf(() => admitInitialChildren(sup({ children: [spec('a'), spec('a')] })))).toBe(
      'id',
    );
  });
});

describe('admitStartedChild', () => {
  const template = spec('runner');

  it('numbers a template start by nextSeq, once; a full spec asks for no number', () => {
    const nextSeq = vi.fn(() => 7);
    const children = new ChildTable();
    const s = sup({ template });
    expect(admitStartedChild(s, children, { specOrArgs: {}, want: 'worker', nextSeq }).id).toBe(
      'runner-7',
    );
    expect(nextSeq).toHaveBeenCalledTimes(1);
    admitStartedChild(s, children, { specOrArgs: spec('x'), want: undefined, nextSeq });
    expect(nextSeq).toHaveBeenCalledTimes(1);
  });

  it('refuses a start past maxChildren before it numbers one', () => {
    const nextSeq = vi.fn(() => 1);
    const children = new ChildTable();
    const s = sup({ template, maxChildren: 1 });
    children.add(admitChildSpec(spec('a'), s), undefined);
    expect(() =>
      admitStartedChild(s, children, { specOrArgs: {}, want: 'worker', nextSeq }),
    ).toThrow(MaxChildrenError);
    expect(nextSeq).not.toHaveBeenCalled();
  });

  it('refuses the wrong type for the overload, an id already there, and args without a template', () => {
    const children = new ChildTable();
    const nextSeq = () => 1;
    const s = sup({ template });
    children.add(admitChildSpec(spec('taken'), s), undefined);
    expect(() =>
      admitStartedChild(s, children, { specOrArgs: {}, want: 'supervisor', nextSeq }),
    ).toThrow(ChildTypeError);
    expect(() =>
      admitStartedChild(s, children, { specOrArgs: spec('taken'), want: undefined, nextSeq }),
    ).toThrow(AlreadyStartedError);
    expect(
      fieldOf(() =>
        admitStartedChild(sup(), children, { specOrArgs: {}, want: 'worker', nextSeq }),
      ),
    ).toBe('start');
  });
});
