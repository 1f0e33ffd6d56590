/**
 * Real AWS SDK clients whose commands are answered in process: a middleware at the front of the client's
 * stack hands each command's name and input to the test and returns its answer, so nothing is serialised,
 * signed or sent (no network, no credentials), and the adapter under test runs the SDK as it does on AWS.
 */
import type { MetadataBearer, MiddlewareStack } from '@smithy/types';

/** A command the client was asked to send. */
export interface SentCommand<I> {
  readonly name: string;
  readonly input: I;
}

/** Static settings a client needs to be built; never used for a request. */
export const OFFLINE = {
  region: 'eu-west-1',
  credentials: { accessKeyId: 'AKIDUNITTEST', secretAccessKey: 'unit-test-secret' },
} as const;

/**
 * Answers every command of `client` with `answer` (its name without the `Command` suffix, e.g.
 * `SendMessageBatch`), and returns the list of commands sent, in order.
 */
export function answerCommands<I extends object, O extends MetadataBearer>(
  client: { middlewareStack: MiddlewareStack<I, O> },
  answer: (name: string, input: I) => Promise<Omit<O, '$metadata'>> | Omit<O, '$metadata'>,
): Array<SentCommand<I>> {
  const sent: Array<SentCommand<I>> = [];
  client.middlewareStack.add(
    (_next, context) => async (args) => {
      const name = String(context.commandName).replace(/Command$/, '');
      sent.push({ name, input: args.input });
      const output = { $metadata: {}, ...(await answer(name, args.input)) } as O;
      return { output, response: {} };
    },
    { step: 'initialize', priority: 'high', name: 'unitTestAnswers' },
  );
  return sent;
}

/** The input of the `index`th command sent, as the type its command takes; fails the test when none was. */
export function inputOf<T>(sent: ReadonlyArray<SentCommand<object>>, index = 0): T {
  const command = sent[index];
  if (command === undefined) throw new Error(`no command #${index} was sent`);
  return command.input as T;
}
