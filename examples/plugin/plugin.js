// The example plugin: a notes table on its own origin, driven by the
// agent of a Switchboard session through the client Switchboard serves.
// Open it as index.html?server=https://your-switchboard (default: the
// Switchboard on http://127.0.0.1:3000).

const server = new URL(location.href).searchParams.get('server') ?? 'http://127.0.0.1:3000';
const { join } = await import(new URL('/clients/switchboard.js', server).href);

const $ = (id) => document.getElementById(id);
const notes = [];

/** The tool this plugin offers the agent. */
const tools = [
  {
    name: 'addNote',
    description: 'Adds a note to the notes table on the user\'s page. Returns how many notes there are.',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string', minLength: 1, maxLength: 200 } },
      required: ['text'],
      additionalProperties: false,
    },
  },
];

/** Adds a line to the list of relayed calls. */
function logCall(text) {
  const li = document.createElement('li');
  li.textContent = text;
  $('calls').append(li);
}

/** Runs one relayed call: the value returned is the agent's result. */
function run(call) {
  if (call.name !== 'addNote') throw new Error(`this page has no tool ${call.name}`);
  const text = String(call.arguments.text).trim();
  if (!text) throw new Error('the note is empty');
  notes.push(text);
  const row = document.createElement('tr');
  for (const cell of [String(notes.length), text]) {
    const td = document.createElement('td');
    td.textContent = cell;
    row.append(td);
  }
  $('notes').append(row);
  return { notes: notes.length, added: text };
}

$('join-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('error').textContent = '';
  $('status').textContent = 'joining';
  try {
    const plugin = await join($('code').value, { baseUrl: server });
    $('join-form').hidden = true;
    $('session').textContent = `session ${plugin.sessionId}`;
    plugin.onStatus((status, error) => {
      $('status').textContent = status;
      if (error) $('error').textContent = error.message;
    });
    plugin.onError((error) => ($('error').textContent = error.message));
    plugin.onCall((call) => {
      try {
        const result = run(call);
        logCall(`${call.name}(${JSON.stringify(call.arguments)}) → ${JSON.stringify(result)}`);
        return result;
      } catch (e) {
        logCall(`${call.name}(${JSON.stringify(call.arguments)}) failed: ${e.message}`);
        throw e;
      }
    });
    plugin.onToolsChanged((update) => {
      $('changes').textContent = `Last change of the session's plugin tools: ${update.type} (${update.toolCount} now)`;
    });
    const answer = await plugin.registerTools(tools);
    $('tools').textContent = `Registered tools: ${answer.registeredTools.join(', ')}`;
  } catch (e) {
    $('status').textContent = 'not joined';
    $('error').textContent = e.message;
  }
});
