import { describe, expect, it } from 'vitest';
import { ContainerError } from '../../src/containers/ContainerError.js';
import { ContractViolation, rejection } from '../../src/testing/contractFixture.js';

describe('rejection', () => {
  it('answers the ContainerError a call rejects with', async () => {
    const error = new ContainerError('not_attached', 'not mine');
    expect(await rejection(Promise.reject(error))).toBe(error);
  });

  it('names what a call resolved with instead of rejecting', async () => {
    const failure = await rejection(Promise.resolve({ exitCode: 4 })).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ContractViolation);
    expect(failure).toMatchObject({ code: 'CONTRACT_VIOLATION' });
    expect((failure as Error).message).toContain('resolved with {"exitCode":4}');
  });

  it('names an error that is not a ContainerError', async () => {
    const failure = await rejection(Promise.reject(new TypeError('boom'))).catch((e: unknown) => e);
    expect(failure).toMatchObject({
      code: 'CONTRACT_VIOLATION',
      message: expect.stringContaining('TypeError: boom'),
    });
  });
});
