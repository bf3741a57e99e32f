// Where an import or a copy goes: the browser storage or memory (the top bar's “Copies go to” menu).

import { $ } from './dom.js';

/** The source a copy to edit goes to: 'memory', else 'opfs' (the browser storage). */
export function editTarget() {
  return $('edit-target').value === 'memory' ? 'memory' : 'opfs';
}
