import type { Context } from 'aws-lambda';
import { localContext } from '../../../../local/stack/lambda-context';
import { type Invoke, lambdaEnvironments } from '../../../../local/stack/lambda-environments';

/** A handler that reports which environment ran it and waits until it is let go. */
function heldEnvironments() {
  const releases: Array<() => void> = [];
  let next = 0;
  const environments = lambdaEnvironments<string, string>(() => {
    next += 1;
    const name = `env-${next}`;
    const handler: Invoke<string, string> = async (event) => {
      if (event === 'fail') throw new Error(`${name} failed`);
      if (event === 'hold') await new Promise<void>((release) => releases.push(release));
      return name;
    };
    return handler;
  });
  const releaseAll = (): void => {
    for (const release of releases.splice(0)) release();
  };
  return { environments, releaseAll };
}

const context: Context = localContext('test', 1_000);

describe('lambdaEnvironments', () => {
  it('makes nothing before the first invocation, then reuses one environment for invocations one at a time', async () => {
    const { environments } = heldEnvironments();
    expect(environments.size()).toBe(0);
    expect(await environments.invoke('go', context)).toBe('env-1');
    expect(await environments.invoke('go', context)).toBe('env-1');
    expect(environments.size()).toBe(1);
  });

  it('runs invocations at once each in an environment of its own', async () => {
    const { environments, releaseAll } = heldEnvironments();
    const running = [
      environments.invoke('hold', context),
      environments.invoke('hold', context),
      environments.invoke('hold', context),
    ];
    expect(environments.size()).toBe(3);
    releaseAll();
    expect((await Promise.all(running)).sort()).toEqual(['env-1', 'env-2', 'env-3']);
  });

  it('takes the most recently freed environment first, and makes no more than ran at once', async () => {
    const { environments, releaseAll } = heldEnvironments();
    const first = environments.invoke('hold', context);
    const second = environments.invoke('hold', context);
    releaseAll();
    await Promise.all([first, second]);
    // Both idle now: env-2 was freed last.
    expect(await environments.invoke('go', context)).toBe('env-2');
    expect(environments.size()).toBe(2);
  });

  it('frees an environment whose invocation failed, and passes the failure on', async () => {
    const { environments } = heldEnvironments();
    await expect(environments.invoke('fail', context)).rejects.toThrow('env-1 failed');
    expect(await environments.invoke('go', context)).toBe('env-1');
    expect(environments.size()).toBe(1);
  });
});
