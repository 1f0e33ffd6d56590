/** Publishing docrelay's events to EventBridge, against a client answered in process. */
import { EventBridgeClient, type PutEventsCommandInput } from '@aws-sdk/client-eventbridge';
import { EventBridgePublisher } from '../../../../functions/adapters/eventbridge/event-publisher';
import { EVENT_SOURCE } from '../../../../functions/ports/event-publisher';
import { answerCommands, inputOf, OFFLINE } from '../sdk-answers';

function setup(answer: () => object = () => ({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] })) {
  const client = new EventBridgeClient(OFFLINE);
  const sent = answerCommands(client, answer);
  return { client, sent };
}

describe('EventBridgePublisher', () => {
  it('puts one event with docrelay as source, the detail as JSON, on the named bus', async () => {
    const { client, sent } = setup();
    await new EventBridgePublisher(client, 'docrelay-bus').publish('Document Stored', { jobId: 'job-1' });
    expect(sent.map((s) => s.name)).toEqual(['PutEvents']);
    expect(inputOf<PutEventsCommandInput>(sent, 0)).toEqual({
      Entries: [
        {
          Source: EVENT_SOURCE,
          DetailType: 'Document Stored',
          Detail: '{"jobId":"job-1"}',
          EventBusName: 'docrelay-bus',
        },
      ],
    });
  });

  it('names the deployment that sent it in every event’s detail, when given one', async () => {
    const { client, sent } = setup();
    await new EventBridgePublisher(client, undefined, 'DocRelay-prod').publish('Document Stored', {
      jobId: 'job-1',
    });
    expect(JSON.parse(String(inputOf<PutEventsCommandInput>(sent, 0).Entries?.[0]?.Detail))).toEqual({
      jobId: 'job-1',
      deployment: 'DocRelay-prod',
    });
  });

  it('puts on the default bus when none is named', async () => {
    const { client, sent } = setup();
    await new EventBridgePublisher(client).publish('Document Failed', { jobId: 'job-1' });
    expect(inputOf<PutEventsCommandInput>(sent, 0).Entries?.[0]).not.toHaveProperty('EventBusName');
  });

  it('throws with the error code when EventBridge refuses the entry', async () => {
    const refused = setup(() => ({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'ThrottlingException' }] }));
    await expect(
      new EventBridgePublisher(refused.client).publish('Document Stored', { jobId: 'job-1' }),
    ).rejects.toThrow('EventBridge refused the Document Stored event: ThrottlingException');
    const silent = setup(() => ({ FailedEntryCount: 1 }));
    await expect(new EventBridgePublisher(silent.client).publish('Document Failed', {})).rejects.toThrow(
      /: unknown$/,
    );
  });
});
